"""report.html opened in a real browser (headless Chromium): images load, key numbers show.

Skipped when no Chromium is installed (Debian: ``apt-get install chromium``). A harness page
loads the report in an iframe; with ``--allow-file-access-from-files`` its script can read
the report's DOM after every image has loaded or failed, and ``--dump-dom`` prints the
result.
"""

import base64
import json
import re
import shutil
import subprocess

import pytest

from sklearn_mace.report import audit_release, write_report
from tests.audit_data import audit_tables

BROWSER = next(
    (shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
    None,
)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="headless Chromium is not installed")

HARNESS = """<!DOCTYPE html><html><body><pre id="result">pending</pre>
<iframe id="report" src="{url}" width="1200" height="900"></iframe>
<script>
window.addEventListener("load", function () {{
  var doc = document.getElementById("report").contentDocument;
  var images = Array.from(doc.images).map(function (img) {{
    return {{file: img.getAttribute("data-file"), complete: img.complete,
             width: img.naturalWidth, height: img.naturalHeight}};
  }});
  document.getElementById("result").textContent =
      JSON.stringify({{images: images, text: doc.body.innerText}});
}});
</script></body></html>"""


def open_in_chromium(report, tmp_path):
    """The report's images (loaded size) and rendered text, as seen by Chromium."""
    harness = tmp_path / "harness.html"
    harness.write_text(HARNESS.format(url=report.as_uri()), encoding="utf-8")
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--allow-file-access-from-files",
        "--virtual-time-budget=10000",
        "--dump-dom",
        harness.as_uri(),
    ]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    found = re.search(r'<pre id="result">(.*?)</pre>', dom.stdout, flags=re.S)
    assert found, dom.stdout[:500] + dom.stderr[-2000:]
    import html

    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    members, non_members, releases = audit_tables(seed=1)
    result = audit_release(members, non_members, releases, verbose=False)
    out = tmp_path_factory.mktemp("browser") / "out"
    return write_report(result, out)["report"], result


def test_images_load_and_key_numbers_appear(report, tmp_path):
    path, result = report
    seen = open_in_chromium(path, tmp_path)
    assert [img["file"] for img in seen["images"]] == [
        "figures/roc_1_leaky.png",
        "figures/risk_1_leaky.png",
        "figures/roc_2_safe.png",
        "figures/risk_2_safe.png",
        "figures/advantage_vs_synthetic_size.png",
    ]
    for img in seen["images"]:
        assert img["complete"] and img["width"] > 300 and img["height"] > 200, img
    text = seen["text"]
    summary = result.summary
    for subject in result.subjects:
        # the card's headline: the certified bounds as rendered, the estimate beside them
        assert result.headline(subject) in text
        assert f"ε at least {subject.epsilon_lower_bound:.2f}" in text
        if subject.advantage_source is not None:
            assert f"at least {subject.advantage_source.claim.advantage_lower_bound:.3f}" in text
        e = subject.ranking_result().scores.estimates
        assert (
            f"U_N = {e['advantage_estimate']:.3f} [{e['advantage_estimate_low']:.3f}, "
            f"{e['advantage_estimate_high']:.3f}]"
        ) in text
        mine = summary[summary["subject"] == subject.name]
        for auc, epsilon in zip(mine["auc"], mine["epsilon_lower_bound"], strict=True):
            assert f"{auc:.3f}" in text and f"{epsilon:.3f}" in text
    assert "How to read the numbers" in text and "record_id" in text


def test_harness_detects_a_broken_image(report, tmp_path):
    # the check above could pass vacuously if a broken image also reported a size: corrupt
    # one embedded PNG and see the browser report it as not decoded (width 0)
    path, _ = report
    page = path.read_text(encoding="utf-8")
    broken = page.replace(
        "data:image/png;base64,", "data:image/png;base64," + base64.b64encode(b"junk").decode(), 1
    )
    broken_path = tmp_path / "broken.html"
    broken_path.write_text(broken, encoding="utf-8")
    seen = open_in_chromium(broken_path, tmp_path)
    widths = [img["width"] for img in seen["images"]]
    assert widths[0] == 0 and all(w > 0 for w in widths[1:])
