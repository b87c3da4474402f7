"""Write sample_votes/tokens_stdlib.npz: token votes of real language models (issue 28).

The teachers are real models, each trained on its own disjoint slice of a text corpus that
ships with Python itself, and they vote the way private prediction uses them (PromptPATE,
Hot PATE): at each step of a generation every teacher predicts the next token given the
text so far, and the votes are that token's histogram over the vocabulary.

- **Corpus**: the standard library's own sources, every ``*.py`` file under
  ``sysconfig.get_paths()["stdlib"]`` outside any directory whose name contains ``test``
  and outside ``site-packages``, ``encodings`` and ``pydoc_data`` (generated files), and
  not the build's ``_sysconfigdata*``, in sorted path order (Python 3.11.7: 10 MB). Chosen over
  ``pydoc_data.topics`` (465k characters in 79 topics): split 100 ways that leaves a
  teacher about 4,600 characters of text, while the sources give each one about 15,000
  tokens and hundreds of natural documents (files) to cut along. The corpus changes with
  the Python version; its sha256 (over each file's relative path, a NUL and its bytes)
  is printed and recorded in sample_votes/README.md.
- **Tokeniser**: Python's own ``tokenize`` module. Comments, non-logical line breaks and
  the encoding/end markers are dropped; a logical line end is ``<nl>``, indentation
  ``<indent>``/``<dedent>``. The vocabulary (K = 8,192, built once over the whole corpus,
  the stand-in for a public tokeniser) is 6 special tokens and the most frequent token
  strings (ties by string); any other string literal is ``<str>``, number ``<num>``, and
  anything else ``<unk>``.
- **Slices**: a seeded 10 % of the files is the public part (the prompts come from it);
  the rest go, largest first, each to the teacher with the fewest tokens so far (ties to
  the lowest index), so slices are disjoint whole files of similar size.
- **Teachers**: one interpolated Witten-Bell 4-gram model per slice (order 1: add-one
  unigrams), counted with numpy over all teachers at once; a teacher predicts its argmax
  token (the classic PATE teacher's label; ties to the lowest id), computed for a chunk
  of (generation, teacher) pairs at once.
- **Generations**: 200 outputs, each from a prompt of 16 tokens starting at a logical line
  of a public file (seeded), of 20 to 60 generated tokens (seeded). The next token is the
  plurality of the votes (ties to the lowest id): the votes file must not depend on the
  mechanism or seed a user analyses it with, and the plurality is the noise-free path
  every aggregator approximates.

The archive is ``scipy.sparse.save_npz``'s CSR layout plus ``output`` (the output of each
generated token), written by ``make_token_votes.write_archive`` (fixed member dates, so the
same votes give the same bytes). ``python scripts/make_corpus_token_votes.py`` rebuilds it
(about 1.5 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import sysconfig
import tokenize
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from make_token_votes import write_archive

SPECIALS = ("<unk>", "<str>", "<num>", "<nl>", "<indent>", "<dedent>")
UNK, STR, NUM, NL, INDENT, DEDENT = range(len(SPECIALS))
SKIPPED = {tokenize.ENCODING, tokenize.ENDMARKER, tokenize.NL, tokenize.COMMENT}
ORDER = 4            # n-gram order of the teachers
PROMPT = 16          # prompt tokens per generation
PAIRS = 1024         # (generation, teacher) pairs scored at once: PAIRS x K float64
# site-packages: not the standard library; encodings: ~120 generated codec tables, nearly
# one file repeated; pydoc_data: one generated dict of documentation strings
EXCLUDED = {"site-packages", "encodings", "pydoc_data"}
OUT = Path(__file__).resolve().parents[1] / "sample_votes" / "tokens_stdlib.npz"


@dataclass(frozen=True)
class Setting:
    teachers: int = 100
    outputs: int = 200
    vocabulary: int = 8192
    lengths: tuple[int, int] = (20, 60)
    public_share: float = 0.1
    seed: int = 28


def corpus_files(root: str | None = None) -> list[tuple[str, bytes]]:
    """``(relative path, bytes)`` of the corpus's files, in sorted path order."""
    base = Path(root or sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(base).parts
        if (any("test" in part or part in EXCLUDED for part in parts[:-1])
                or parts[-1].startswith("_sysconfigdata")):
            continue
        found.append((path.relative_to(base).as_posix(), path.read_bytes()))
    return found


def corpus_sha256(files) -> str:
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(name.encode() + b"\0" + data)
    return digest.hexdigest()


def tokens(data: bytes) -> list[tuple[int, str]]:
    """``(kind, string)`` of a file's tokens (module docstring); [] if it does not tokenise."""
    found = []
    try:
        for token in tokenize.tokenize(io.BytesIO(data).readline):
            if token.type in SKIPPED:
                continue
            kind = {tokenize.NEWLINE: NL, tokenize.INDENT: INDENT, tokenize.DEDENT: DEDENT,
                    tokenize.STRING: STR, tokenize.NUMBER: NUM}.get(token.type, UNK)
            found.append((kind, token.string))
    except (tokenize.TokenError, SyntaxError):
        return []
    return found


def vocabulary(documents, size: int) -> list[str]:
    """The special tokens, then the ``size - 6`` most frequent strings (ties by string)."""
    counts: dict[str, int] = {}
    for document in documents:
        for kind, text in document:
            if kind not in (NL, INDENT, DEDENT):
                counts[text] = counts.get(text, 0) + 1
    ranked = sorted(counts, key=lambda text: (-counts[text], text))
    return list(SPECIALS) + ranked[:size - len(SPECIALS)]


def encode(document, index: dict[str, int]) -> np.ndarray:
    ids = [kind if kind in (NL, INDENT, DEDENT) else index.get(text, kind)
           for kind, text in document]
    return np.asarray(ids, dtype=np.int64)


class Teachers:
    """Interpolated Witten-Bell n-gram models, one per teacher, held as sorted count tables.

    For a context h of length n - 1, ``P_n(w | h) = (c(h, w) + T(h) P_{n-1}(w | h')) /
    (c(h) + T(h))`` with T(h) the number of distinct words seen after h (``P_n = P_{n-1}``
    for an unseen h), and ``P_1(w) = (c(w) + 1) / (N + K)``.
    """

    def __init__(self, ids: np.ndarray, teacher: np.ndarray, document: np.ndarray, *,
                 teachers: int, classes: int):
        self.classes = classes
        unigram = np.bincount(teacher * classes + ids, minlength=teachers * classes)
        unigram = unigram.reshape(teachers, classes).astype(np.float64)
        self.unigram = (unigram + 1.0) / (unigram.sum(axis=1, keepdims=True) + classes)
        self.tables = []
        for n in range(2, ORDER + 1):
            start = np.arange(n - 1, ids.size)
            start = start[document[start] == document[start - n + 1]]  # within one file
            context = self._context(np.stack([ids[start - j] for j in range(n - 1, 0, -1)],
                                             axis=1), teacher[start])
            full, counts = np.unique(context * classes + ids[start], return_counts=True)
            keys, first = np.unique(full // classes, return_index=True)
            seen = np.add.reduceat(counts, first).astype(np.float64)
            kinds = np.diff(np.append(first, full.size)).astype(np.float64)
            self.tables.append((keys, np.append(first, full.size), full % classes,
                                counts.astype(np.float64), 1.0 / (seen + kinds),
                                kinds / (seen + kinds)))

    def _context(self, history: np.ndarray, teacher: np.ndarray) -> np.ndarray:
        key = teacher.astype(np.int64)
        for column in range(history.shape[1]):
            key = key * self.classes + history[:, column]
        return key

    def predict(self, history: np.ndarray, teacher: np.ndarray) -> np.ndarray:
        """Each pair's argmax token given its last ``ORDER - 1`` tokens, ``PAIRS`` at once."""
        return np.concatenate([self._argmax(history[at:at + PAIRS], teacher[at:at + PAIRS])
                               for at in range(0, len(teacher), PAIRS)])

    def _argmax(self, history: np.ndarray, teacher: np.ndarray) -> np.ndarray:
        pairs, classes = len(teacher), self.classes
        weight = np.ones(pairs)  # the product of the higher orders' back-off weights
        where, values = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
        for n, (keys, indptr, words, counts, scale, backoff) in zip(
                range(ORDER, 1, -1), reversed(self.tables), strict=True):
            if not keys.size:  # no n-gram of this order in any slice
                continue
            key = self._context(history[:, history.shape[1] - n + 1:], teacher)
            row = np.minimum(np.searchsorted(keys, key), keys.size - 1)
            found = np.flatnonzero(keys[row] == key)
            row = row[found]
            lengths = indptr[row + 1] - indptr[row]
            entry = (np.repeat(indptr[row] - np.cumsum(lengths) + lengths, lengths)
                     + np.arange(lengths.sum()))
            pair = np.repeat(found, lengths)
            where.append(pair * classes + words[entry])
            values.append(weight[pair] * scale[row].repeat(lengths) * counts[entry])
            weight[found] *= backoff[row]
        scores = self.unigram[teacher] * weight[:, None]
        scores += np.bincount(np.concatenate(where), weights=np.concatenate(values),
                              minlength=pairs * classes).reshape(pairs, classes)
        return scores.argmax(axis=1)


def split(documents, setting: Setting, rng) -> tuple[np.ndarray, np.ndarray]:
    """``(public file indices, teacher of each file or -1)`` (module docstring)."""
    usable = np.flatnonzero([len(d) > ORDER for d in documents])
    public = np.sort(rng.permutation(usable)[:max(1, round(setting.public_share * usable.size))])
    owner = np.full(len(documents), -1)
    load = np.zeros(setting.teachers, dtype=np.int64)
    private = np.setdiff1d(usable, public)
    for index in private[np.argsort([-len(documents[i]) for i in private], kind="stable")]:
        owner[index] = int(np.argmin(load))
        load[owner[index]] += len(documents[index])
    return public, owner


def prompts(encoded, public, setting: Setting, rng) -> np.ndarray:
    """``(outputs, PROMPT)`` token ids, each from a logical line start of a public file."""
    starts = [(i, p) for i in public for p in range(1, len(encoded[i]) - PROMPT + 1)
              if encoded[i][p - 1] in (NL, INDENT, DEDENT)]
    chosen = rng.choice(len(starts), size=setting.outputs, replace=False)
    return np.stack([encoded[starts[c][0]][starts[c][1]:starts[c][1] + PROMPT]
                     for c in np.sort(chosen)])


def generate(models: Teachers, prompt: np.ndarray, lengths: np.ndarray, teachers: int):
    """Votes (COO triplets over query ids), the output of each query, and the texts.

    All outputs advance one step at a time; at each step every (output, teacher) pair
    predicts, and the plurality (ties to the lowest id) extends the output.
    """
    outputs, classes = len(lengths), models.classes
    text = np.concatenate([prompt, np.zeros((outputs, lengths.max()), dtype=np.int64)], axis=1)
    offset = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    rows, cols, data = [], [], []
    for step in range(int(lengths.max())):
        active = np.flatnonzero(lengths > step)
        history = text[active, PROMPT + step - ORDER + 1:PROMPT + step]
        teacher = np.tile(np.arange(teachers), active.size)
        votes = models.predict(np.repeat(history, teachers, axis=0), teacher)
        key, count = np.unique(np.repeat(np.arange(active.size), teachers) * classes + votes,
                               return_counts=True)
        rows.append(offset[active][key // classes] + step)
        cols.append(key % classes)
        data.append(count)
        table = np.zeros((active.size, classes), dtype=np.int64)
        table[key // classes, key % classes] = count
        text[active, PROMPT + step] = table.argmax(axis=1)
    return (np.concatenate(rows), np.concatenate(cols), np.concatenate(data),
            np.repeat(np.arange(outputs), lengths), text)


def make(files, setting: Setting = Setting()):
    """``(indptr, indices, data, output, texts, words)`` of the sample from ``files``."""
    rng = np.random.default_rng(setting.seed)
    documents = [tokens(data) for _, data in files]
    words = vocabulary(documents, setting.vocabulary)
    index = {word: i for i, word in enumerate(words)}
    encoded = [encode(document, index) for document in documents]
    public, owner = split(documents, setting, rng)
    mine = np.flatnonzero(owner >= 0)
    models = Teachers(np.concatenate([encoded[i] for i in mine]),
                      np.repeat(owner[mine], [len(encoded[i]) for i in mine]),
                      np.repeat(mine, [len(encoded[i]) for i in mine]),
                      teachers=setting.teachers, classes=len(words))
    prompt = prompts(encoded, public, setting, rng)
    low, high = setting.lengths
    lengths = rng.integers(low, high + 1, size=setting.outputs)
    rows, cols, data, output, texts = generate(models, prompt, lengths, setting.teachers)
    order = np.lexsort((cols, rows))
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=output.size))))
    return (indptr.astype(np.int32), cols[order].astype(np.int32),
            data[order].astype(np.int32), output, texts, words)


def detokenise(ids, words, *, mark: int | None = None) -> str:
    """Token ids as source-like text: spaces between tokens, lines and indentation; ``»``
    before token ``mark`` (where a generation starts)."""
    lines, line, depth = [], [], 0
    for position, token in enumerate(ids):
        if position == mark:
            line.append("\u00bb")
        if token == NL:
            lines.append("    " * depth + " ".join(line))
            line = []
        elif token in (INDENT, DEDENT):
            depth = max(0, depth + (1 if token == INDENT else -1))
        else:
            line.append(words[token])
    return "\n".join(lines + (["    " * depth + " ".join(line)] if line else []))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--show", type=int, default=3, help="outputs to print as text")
    args = parser.parse_args(argv)
    files = corpus_files()
    setting = Setting()
    indptr, indices, data, output, texts, words = make(files, setting)
    write_archive(args.out, {"indices": indices, "indptr": indptr, "format": np.array(b"csr"),
                             "shape": np.array([indptr.size - 1, len(words)]), "data": data,
                             "output": output})
    print(f"Python {sys.version.split()[0]}; corpus: {len(files)} files, sha256 "
          f"{corpus_sha256(files)}")
    print(f"wrote {args.out}: {indptr.size - 1} tokens x {len(words)} classes, "
          f"{setting.teachers} teachers, {setting.outputs} outputs, sha256 "
          f"{hashlib.sha256(args.out.read_bytes()).hexdigest()}")
    lengths = np.bincount(output)
    for number in range(args.show):
        cut = PROMPT + lengths[number]
        print(f"--- output {number}\n{detokenise(texts[number, :cut], words, mark=PROMPT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
