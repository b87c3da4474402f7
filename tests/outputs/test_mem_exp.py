import numpy as np, pytest
from click.testing import CliRunner
from pate_cli.cli.report import report
from pate_cli.outputs import figure_data
from tests.memory import traced_peak

@pytest.mark.parametrize("small_chunks", [False, True])
@pytest.mark.parametrize("figure_rows", [1 << 12, 1 << 10])
def test_exp(tmp_path, monkeypatch, request, small_chunks, figure_rows):
    if small_chunks:
        request.getfixturevalue("small_stream_chunks")
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", figure_rows)
    rng = np.random.default_rng(4)
    distinct = rng.multinomial(250, np.full(10, 0.1), size=200).astype(np.int16)
    def peak(queries):
        path = tmp_path / f"votes{queries}.npy"
        np.save(path, distinct[rng.integers(0, 200, size=queries)])
        args = [str(path), "--accounting", "expected", "-T", "30", "--sigma-threshold",
                "10", "--sigma", "6", "-o", str(tmp_path / f"r{queries}.md")]
        return traced_peak(lambda: CliRunner().invoke(report, args, catch_exceptions=False))
    peak(2_000)
    out = []
    for q in (10_000, 20_000, 60_000, 200_000):
        out.append((q, round(peak(q) / 2**20, 2)))
    print("\nsmall_chunks", small_chunks, "figure_rows", figure_rows, out)
