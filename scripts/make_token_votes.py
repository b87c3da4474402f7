"""Write sample_votes/tokens_zipf.npz: synthetic token votes for the README's worked example.

Said plainly: these are generated, not the votes of real language models. They have the
shape private prediction produces (Hot PATE, PromptPATE, DP-ICL): one histogram per
generated token over a vocabulary of 32,000 (Llama 2's), 100 teachers (prompts with
disjoint demonstrations), 24 outputs of 40 to 120 tokens. Each token's candidates are drawn
from a Zipf law over the vocabulary (exponent 1.1, ranks mapped to ids by a fixed
permutation); the teachers' shared distribution over 12 candidates puts a Beta(2, 1)-sized
share on the first and splits the rest Zipf-wise (exponent 1.2); each teacher samples one
token from it. The archive is ``scipy.sparse.save_npz``'s CSR layout with an extra array
``output`` (the output each token belongs to; ``scipy.sparse.load_npz`` ignores it).
``python scripts/make_token_votes.py`` regenerates it byte for byte (fixed seed).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np

VOCABULARY, TEACHERS, OUTPUTS, CANDIDATES = 32_000, 100, 24, 12
OUT = Path(__file__).resolve().parents[1] / "sample_votes" / "tokens_zipf.npz"


def token_votes(seed: int = 2026):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(40, 121, size=OUTPUTS)
    queries = int(lengths.sum())
    ranks = np.arange(1, VOCABULARY + 1, dtype=np.float64)
    law = ranks**-1.1
    law /= law.sum()
    ids = rng.permutation(VOCABULARY)
    counts = np.zeros((queries, CANDIDATES), dtype=np.int64)
    classes = np.zeros((queries, CANDIDATES), dtype=np.int64)
    for row in range(queries):  # a small generator: clarity over speed
        chosen = ids[rng.choice(VOCABULARY, size=CANDIDATES, replace=False, p=law)]
        tail = np.arange(1, CANDIDATES, dtype=np.float64) ** -1.2
        top = rng.beta(2.0, 1.0)
        share = np.concatenate(([top], (1.0 - top) * tail / tail.sum()))
        counts[row] = rng.multinomial(TEACHERS, share)
        classes[row] = chosen
    order = np.argsort(classes, axis=1)
    classes = np.take_along_axis(classes, order, axis=1)
    counts = np.take_along_axis(counts, order, axis=1)
    kept = counts > 0
    indptr = np.concatenate(([0], np.cumsum(kept.sum(axis=1))))
    return (indptr.astype(np.int32), classes[kept].astype(np.int32),
            counts[kept].astype(np.int32), np.repeat(np.arange(OUTPUTS), lengths))


def write(path: Path = OUT) -> None:
    indptr, indices, data, output = token_votes()
    write_archive(path, {"indices": indices, "indptr": indptr, "format": np.array(b"csr"),
                         "shape": np.array([indptr.size - 1, VOCABULARY]), "data": data,
                         "output": output})


def write_archive(path: Path, arrays: dict) -> None:
    """``arrays`` as a ``save_npz``-style archive, byte for byte reproducible (members in
    the order given, deflated, with a fixed date)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key, value in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, value, allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, buffer.getvalue())


if __name__ == "__main__":
    write()
    print(f"wrote {OUT}")
