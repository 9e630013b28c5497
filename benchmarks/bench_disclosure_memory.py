"""Peak memory and CPU of one disclosure attack on a large numeric release (issue #28).

The release: ``--rows`` rows (default 10 000 000) of 6 correlated Gaussian columns, each
column its own contiguous float64 array (as ``read_table`` gives a numeric CSV), 300 of
them members verbatim; 600 members and 600 non-members attacked (the audit's pools).
``--attack`` is ``inference`` (fit, ``evaluate`` and ``evaluate_pooled``), ``linkability``
(fit, ``evaluate``) or ``singling`` (``singling_out_risk``: both modes). One attack per
run, in this process: the peak is ``VmHWM`` after a reset (``/proc/self/clear_refs``),
``added`` its rise above the resident memory before the attack (the interpreter and the
raw release), CPU seconds by ``time.process_time``; the result table is printed to
compare runs of two source trees.

    python benchmarks/bench_disclosure_memory.py --attack inference
    python benchmarks/bench_disclosure_memory.py --attack singling --rows 1000000

Measured on 2 shared cores (load average 0.5–3), 10 million rows, the interpreter
without torch and the raw release: 676 MiB. MiB added by the attack and CPU s, the code
before issue #28's release views → after (same results, printed tables identical; the
CPU of inference and linkability from back-to-back runs at load 0.8–1.5):

    attack                 added MiB before → after   CPU s before → after
    attribute inference         698 → 220              108.7 → 117.2
    linkability                 582 → 115               44.3 →  48.5
    singling out (both)         821 → 363              153.9 → 142.1

What is left in singling out is its univariate draw: ``RandomState.choice`` permutes all
of its candidates, one int32 per value held once (60 million here: 229 MiB).
"""

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from sklearn_mace.disclosure import AttributeInferenceRisk, LinkabilityRisk, singling_out_risk


def _status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024


def make_table(n, rng, mixing):
    """``n`` rows of 6 correlated Gaussian columns, one contiguous array per column."""
    columns = {f"x{j}": np.empty(n) for j in range(6)}
    for start in range(0, n, 1 << 20):
        block = rng.normal(size=(min(1 << 20, n - start), 6)) @ mixing
        for j in range(6):
            columns[f"x{j}"][start : start + len(block)] = block[:, j]
    return pd.DataFrame(columns)


def attack(name, release, targets, control):
    """Fit and evaluate one attack; its result table."""
    if name == "inference":
        risk = AttributeInferenceRisk(random_state=0).fit(release)
        return pd.concat([risk.evaluate(targets, control), risk.evaluate_pooled(targets, control)])
    if name == "linkability":
        return LinkabilityRisk(random_state=0).fit(release).evaluate(targets, control)
    return singling_out_risk(targets, control, release, random_state=0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--attack", choices=["inference", "linkability", "singling"])
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    mixing = rng.normal(size=(6, 6)) / np.sqrt(6)
    members, non_members = make_table(5000, rng, mixing), make_table(5000, rng, mixing)
    release = make_table(args.rows, rng, mixing)
    release.iloc[:300] = members.iloc[:300].to_numpy()
    targets = members.sample(600, random_state=1)
    control = non_members.sample(600, random_state=2)
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as reset:
        reset.write("5")
    start = time.process_time()
    result = attack(args.attack, release, targets, control)
    cpu = time.process_time() - start
    peak = _status("VmHWM")
    print(
        f"{args.attack}: {args.rows} rows, before {before:.0f} MiB, peak {peak:.0f} MiB, "
        f"added {peak - before:.0f} MiB, {cpu:.1f} CPU s"
    )
    print(result.to_string())


if __name__ == "__main__":
    main()
