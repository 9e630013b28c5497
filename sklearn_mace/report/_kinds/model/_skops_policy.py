"""Which types a skops file may hold: an explicit allow-list of exact names, never a prefix.

skops refuses to build any object whose type is not trusted. Trusting every type whose module
starts with ``sklearn.``, ``numpy.`` or ``scipy.`` is not safe: those packages hold functions
that run code (NumPy's private test helper ``runstring`` calls ``exec``), and a skops file can
chain them through ``FunctionTransformer`` steps. So the types a file may hold beyond skops'
own defaults are named exactly, by the classes themselves (``module.QualName``, as skops
names them):

* every scikit-learn estimator class (:func:`sklearn.utils.all_estimators`);
* the helper classes fitted estimators hold: trees (``Tree``, ``TreePredictor``), neighbour
  trees and distance metrics, optimizers, calibrators, Gaussian-process kernels, loss and
  link objects, ``Bunch``; ``functools.partial`` (the function it wraps is checked on its
  own);
* NumPy and SciPy data types: ``dtype``, scalar types, random generators, sparse matrices;
* no function, except those in :data:`TRUSTED_FUNCTIONS` (``check_array``, which
  ``HistGradientBoostingClassifier`` holds for categorical features). A
  ``FunctionTransformer(func=f)`` with any other ``f`` is refused by name unless the caller
  lists ``f`` in ``trusted``.

One function, :func:`check_skops_types`, decides for the audited model and for a shadow-model
recipe alike; :func:`check_estimator_writes` refuses estimators that would write files when
fitted (a ``Pipeline`` with ``memory=``).

**Sizes before types.** A skops file is a zip archive, and skops inflates every array while it
lists the file's types (:func:`skops.io.get_untrusted_types` reads them into memory): a 3 MB
file holding a deflated 3.2 GB array of zeros took more than 6 GiB. So
:func:`check_skops_archive` runs first and inflates nothing: the sizes the archive declares
for its members (``ZipInfo.file_size``, read from the central directory) must stay within

* an absolute cap, :data:`MAX_SKOPS_BYTES` (2 GiB), and
* :data:`MAX_SKOPS_RATIO` (100) times the file's size on disk, for archives declaring more
  than :data:`SKOPS_RATIO_FLOOR` (64 MiB): real models deflate a few times (skops stores
  them uncompressed by default), a bomb a thousand times;

or, when the caller gives one (``max_skops_bytes=``, ``--max-skops-size``), within that
number of bytes alone.

Then each member is inflated once, a megabyte at a time, and counted (``zipfile`` stops at
the declared size and checks the CRC), so a member whose header lies about its size is refused
too, before skops reads it whole.
"""

import functools
import importlib
import os
import zipfile

from ..._io import AuditInputError

__all__ = [
    "MAX_SKOPS_BYTES",
    "MAX_SKOPS_RATIO",
    "SKOPS_RATIO_FLOOR",
    "TRUSTED_FUNCTIONS",
    "check_estimator_writes",
    "check_skops_archive",
    "check_skops_types",
    "trusted_types",
]

#: The most a skops file may inflate to (bytes), unless the caller raises it.
MAX_SKOPS_BYTES = 2 * 1024**3
#: The most a skops file may inflate to, as a multiple of its size on disk, by default ...
MAX_SKOPS_RATIO = 100
#: ... once it declares more than this many bytes (small files may deflate well).
SKOPS_RATIO_FLOOR = 64 * 1024**2
_CHUNK = 1024**2  # bytes inflated at a time while the declared sizes are verified

#: Functions a fitted scikit-learn estimator may hold (exact names; no other function loads).
TRUSTED_FUNCTIONS = ("sklearn.utils.validation.check_array",)

# (module, attribute): classes whose instances fitted estimators hold; those missing from the
# installed versions are skipped
_HELPER_CLASSES = (
    ("sklearn.tree._tree", "Tree"),
    ("sklearn.ensemble._hist_gradient_boosting.predictor", "TreePredictor"),
    ("sklearn.neighbors._kd_tree", "KDTree"),
    ("sklearn.neighbors._ball_tree", "BallTree"),
    ("sklearn.neural_network._stochastic_optimizers", "AdamOptimizer"),
    ("sklearn.neural_network._stochastic_optimizers", "SGDOptimizer"),
    ("sklearn.calibration", "_CalibratedClassifier"),
    ("sklearn.calibration", "_SigmoidCalibration"),
    ("sklearn.calibration", "_TemperatureScaling"),
    ("sklearn.gaussian_process._gpc", "_BinaryGaussianProcessClassifierLaplace"),
    ("sklearn.utils._bunch", "Bunch"),
    ("functools", "partial"),
    ("numpy", "dtype"),
    ("numpy", "ndarray"),
    ("numpy.random", "RandomState"),
    ("numpy.random", "Generator"),
    ("numpy.random", "PCG64"),
    ("numpy.random", "MT19937"),
    ("numpy.random", "SeedSequence"),
)
_NUMPY_SCALARS = (
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "longdouble",
    "complex64",
    "complex128",
    "str_",
    "bytes_",
    "datetime64",
    "timedelta64",
)
_SPARSE = ("csr_matrix", "csc_matrix", "coo_matrix", "csr_array", "csc_array", "coo_array")
# modules all of whose classes derived from a base are data, not code: (module, base)
_CLASS_FAMILIES = (
    ("sklearn.metrics._dist_metrics", "DistanceMetric"),
    ("sklearn.gaussian_process.kernels", "Kernel"),
    ("sklearn._loss.loss", "BaseLoss"),
    ("sklearn._loss.link", "BaseLink"),
)


def _name(obj):
    """``module.QualName``, as skops names a type or a function."""
    return f"{obj.__module__}.{obj.__qualname__}"


def _attribute(module, name):
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def _family(module, base):
    """The classes of ``module`` derived from ``module.base`` (base included)."""
    try:
        found = importlib.import_module(module)
    except ImportError:
        return []
    root = getattr(found, base, None)
    if not isinstance(root, type):
        return []
    return [
        value
        for value in vars(found).values()
        if isinstance(value, type) and issubclass(value, root)
    ]


@functools.cache
def trusted_types():
    """The exact type names a skops file may hold (see the module docstring).

    Returns
    -------
    names : frozenset of str
        ``module.QualName`` of every trusted class, and :data:`TRUSTED_FUNCTIONS`.

    Examples
    --------
    >>> from sklearn_mace.report._kinds.model._skops_policy import trusted_types
    >>> "sklearn.tree._tree.Tree" in trusted_types()
    True
    >>> any(name.startswith("numpy.testing") for name in trusted_types())
    False
    """
    from sklearn.utils import all_estimators

    classes = [cls for _, cls in all_estimators()]
    classes += [_attribute(module, name) for module, name in _HELPER_CLASSES]
    classes += [_attribute("numpy", name) for name in _NUMPY_SCALARS]
    classes += [_attribute("scipy.sparse", name) for name in _SPARSE]
    for module, base in _CLASS_FAMILIES:
        classes += _family(module, base)
    names = {_name(cls) for cls in classes if isinstance(cls, type)}
    return frozenset(names | set(TRUSTED_FUNCTIONS))


def check_skops_types(untrusted, *, path, trusted=()):
    """The types to trust when loading a skops file, or an error naming those refused.

    Parameters
    ----------
    untrusted : list of str
        What :func:`skops.io.get_untrusted_types` reports for the file.
    path : str or Path
        The file, for the message.
    trusted : sequence of str, default=()
        Further exact names the caller trusts (e.g. a function of their own
        ``FunctionTransformer``); never prefixes.

    Returns
    -------
    names : list of str
        ``untrusted``, every one of them allowed: pass it to ``skops.io.load(trusted=...)``.

    Raises
    ------
    AuditInputError
        Naming every type that is neither in :func:`trusted_types` nor in ``trusted``.

    Examples
    --------
    >>> from sklearn_mace.report._kinds.model._skops_policy import check_skops_types
    >>> check_skops_types(["sklearn.tree._tree.Tree"], path="forest.skops")
    ['sklearn.tree._tree.Tree']
    >>> check_skops_types(["posix.system"], path="x.skops")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sklearn_mace.report._io.AuditInputError: Refusing to load the skops model 'x.skops': ...
    """
    allowed = trusted_types() | set(trusted)
    refused = [name for name in untrusted if name not in allowed]
    if refused:
        raise AuditInputError(
            f"Refusing to load the skops model '{path}': it holds types that are not on the "
            f"list of scikit-learn, NumPy and SciPy classes fitted models are made of, and "
            f"could run code: {refused}. Functions (e.g. in a FunctionTransformer) are "
            "refused unless listed. Export the model to ONNX, or, if you trust exactly these "
            "names, pass them as trusted types."
        )
    return list(untrusted)


def check_estimator_writes(estimator, *, path):
    """Refuse an estimator that would write files when fitted (``memory=`` caching).

    A shadow-model recipe is cloned and fitted; a ``Pipeline(memory="/some/folder")`` would
    cache its transformers there, outside the audit's output folder.

    Parameters
    ----------
    estimator : estimator
        A loaded model or recipe.
    path : str or Path
        Its file, for the message.

    Raises
    ------
    AuditInputError
        Naming the parameter.
    """
    if not hasattr(estimator, "get_params"):
        return
    for key, value in estimator.get_params(deep=True).items():
        if (key == "memory" or key.endswith("__memory")) and value is not None:
            raise AuditInputError(
                f"The model in '{path}' caches to {value!r} ({key}=...): fitting it would "
                "write files outside the audit's output folder. Save it with memory=None."
            )


def _size(n):
    """Bytes in binary units, for messages."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return None  # unreachable


def _verify_declared_sizes(archive):
    """Inflate each member a chunk at a time: its real size must be the declared one."""
    for info in archive.infolist():
        seen = 0
        with archive.open(info) as member:  # zipfile stops at file_size and checks the CRC
            while chunk := member.read(_CHUNK):
                seen += len(chunk)
        if seen != info.file_size:
            raise zipfile.BadZipFile(
                f"member {info.filename!r} inflates to {seen} bytes, not the {info.file_size} "
                "it declares"
            )


def _cap(declared, on_disk, max_bytes):
    """The most the archive may inflate to: ``max_bytes`` when the caller set it, else the
    default cap and, beyond the floor, the ratio to the file's size."""
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
            raise ValueError(
                f"max_skops_bytes must be a positive integer or None; got {max_bytes!r}."
            )
        return max_bytes, f"max_skops_bytes={max_bytes}"
    if declared <= SKOPS_RATIO_FLOOR:
        return MAX_SKOPS_BYTES, "the default cap"
    by_ratio = max(MAX_SKOPS_RATIO * on_disk, SKOPS_RATIO_FLOOR)
    if by_ratio < MAX_SKOPS_BYTES:
        return by_ratio, f"{MAX_SKOPS_RATIO} times the file's size, the default cap"
    return MAX_SKOPS_BYTES, "the default cap"


def check_skops_archive(path, *, max_bytes=None):
    """Refuse a skops file that would inflate beyond a cap, before anything is inflated.

    The sizes the zip archive declares for its members (``ZipInfo.file_size``) are added up
    and compared with the cap: by default :data:`MAX_SKOPS_BYTES` and, for archives
    declaring more than :data:`SKOPS_RATIO_FLOOR`, :data:`MAX_SKOPS_RATIO` times the file's
    size on disk (a zip bomb); ``max_bytes`` replaces both. Only then is each member
    inflated, a megabyte at a time and discarded, to check that it holds what it declares.

    Parameters
    ----------
    path : str or Path
        The ``.skops`` file.
    max_bytes : int, default=None
        The most the archive may inflate to, in bytes, whatever its size on disk (for a
        large model you trust). None: the default caps above (2 GiB; 100 times the file).

    Returns
    -------
    declared : int
        The declared uncompressed size of the archive, in bytes.

    Raises
    ------
    AuditInputError
        Not a zip archive, a zip bomb (naming the sizes, the cap and ``max_skops_bytes``),
        or a member whose real size differs from the declared one.
    ValueError
        ``max_bytes`` not a positive integer.

    Examples
    --------
    >>> import tempfile, zipfile
    >>> from pathlib import Path
    >>> from sklearn_mace.report._kinds.model._skops_policy import check_skops_archive
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = Path(folder.name) / "tiny.skops"
    >>> with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
    ...     archive.writestr("schema.json", "{}" + " " * 10_000)
    >>> check_skops_archive(path)
    10002
    >>> check_skops_archive(path, max_bytes=1000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sklearn_mace.report._io.AuditInputError: Refusing to load the skops model '...': ...
    >>> folder.cleanup()
    """
    on_disk = max(os.path.getsize(path), 1)
    try:
        with zipfile.ZipFile(path) as archive:
            declared = sum(info.file_size for info in archive.infolist())
            cap, which = _cap(declared, on_disk, max_bytes)
            if declared > cap:
                raise AuditInputError(
                    f"Refusing to load the skops model '{path}': it is {_size(on_disk)} on "
                    f"disk but declares {_size(declared)} once inflated "
                    f"({declared / on_disk:.0f} times its size), above {_size(cap)} "
                    f"({which}): a zip bomb, or a model too large to load safely. Nothing "
                    "was inflated. If you trust the file, pass max_skops_bytes= of at least its "
                    "declared size."
                )
            _verify_declared_sizes(archive)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as exc:
        raise AuditInputError(f"Cannot read '{path}' as a skops file: {exc}") from exc
    return declared
