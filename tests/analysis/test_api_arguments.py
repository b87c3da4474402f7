"""The Python API's arguments are checked as the command line's are: a wrong type or value
is a ``TypeError`` or ``ValueError`` (``InputError``, ``OptionError``) of one line, never an
``AttributeError`` from deep inside, and arrays pass the checks their files pass."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pate_cli
from pate_cli.analysis import analyze_votes
from pate_cli.errors import InputError, OptionError
from tests import SAMPLES

VOTES = np.random.default_rng(0).multinomial(20, [0.6, 0.2, 0.1, 0.05, 0.05], size=50)


@pytest.mark.parametrize("student, message", [
    (np.full((50, 5), 0.5), "the student array: query 0 sums to 2.5, not 1"),
    (np.full((50, 5), -1.0), "the student array: query 0, class 0 is negative"),
    (np.full((50, 5), np.nan), "the student array: query 0, class 0 is not finite"),
    (np.full((49, 5), 0.2), "the student array: has shape 49 x 5 but the votes are 50"),
])
def test_a_student_array_is_checked_as_a_student_file_is(student, message):
    """It was taken as it was: rows summing to 2.5 or negative gave a run, NaN a message
    about log q."""
    with pytest.raises(InputError, match=message):
        pate_cli.analyze(VOTES, "interactive", student=student)


def test_a_student_given_as_lists_is_the_array():
    student = np.full((50, 5), 0.2)
    assert (pate_cli.analyze(VOTES, "interactive", student=student.tolist()).epsilon
            == pate_cli.analyze(VOTES, "interactive", student=student).epsilon)


@pytest.mark.parametrize("call, kind, message", [
    (lambda: pate_cli.analyze(VOTES, []), TypeError, "mechanism must be a name or a "
                                                     "mechanism, got \\[\\]"),
    (lambda: pate_cli.analyze(VOTES, 3), TypeError, "got 3"),
    (lambda: pate_cli.analyze(VOTES, "gnmax", executor=5), TypeError,
     "executor must be a concurrent.futures executor or a distributed.Client, got 5"),
    (lambda: pate_cli.analyze(VOTES, "gnmax", teachers="20"), InputError,
     "--teachers must be a positive number, got '20'"),
    (lambda: pate_cli.load_votes(VOTES, classes="3"), OptionError,
     "--classes must be a whole number from 2 to 2\\^53, got '3'"),
    (lambda: pate_cli.analyze(VOTES, "gnmax", budget="2"), OptionError,
     "--budget must be a positive number, got '2'"),  # was "must be real number, not str"
    (lambda: pate_cli.analyze(VOTES, "gnmax", workers="2"), OptionError,
     "--workers must be a whole number of at least 1, got '2'"),
    (lambda: pate_cli.analyze(VOTES, "gnmax", progress=5), OptionError,
     "progress must be a function of .done, total., got 5"),
])
def test_a_wrong_argument_is_one_clear_error(call, kind, message):
    with pytest.raises(kind, match=message):
        call()


def test_analyze_votes_takes_rows_as_lists():
    mechanism = pate_cli.GNMax(sigma=10.0)
    assert (analyze_votes(VOTES.tolist(), mechanism, per_query=False).epsilon
            == analyze_votes(VOTES, mechanism, per_query=False).epsilon)


@pytest.mark.parametrize("options, message", [
    ({"queries": 10**6}, "--queries 1000000 is larger than the 50 queries in the vote array"),
    ({"labels": np.zeros(3, dtype=int)}, "has 3 labels but the vote array has 50 queries"),
    ({"query_indices": np.ones(50, dtype=bool)}, "the query indices: holds true/false values "
                                                 r"\(a mask\), not row numbers"),
])
def test_messages_about_an_array_name_it_not_none(options, message):
    with pytest.raises(ValueError, match=message):
        pate_cli.analyze(VOTES, "gnmax", **options)


def test_query_indices_as_a_list_or_a_range_are_row_numbers():
    assert pate_cli.analyze(VOTES, "gnmax", query_indices=[0, 2]).queries == 2
    assert pate_cli.analyze(VOTES, "gnmax", query_indices=range(5)).queries == 5


def test_query_indices_from_pandas_or_whole_floats_are_row_numbers():
    """A Series, an Index, a one-column DataFrame (api.md's promise) and whole floats (as a
    .npy file of them is read) had raised TypeError or been refused."""
    import pandas as pd

    rows = np.arange(0, 40, 3)
    expected = pate_cli.analyze(VOTES, "gnmax", query_indices=rows).to_dict()
    for given in (pd.Series(rows), pd.Index(rows), pd.DataFrame({"row": rows}),
                  rows.astype(float)):
        assert pate_cli.analyze(VOTES, "gnmax", query_indices=given).to_dict() == expected
    with pytest.raises(pate_cli.InputError, match=r"entry 1 \(2\.5\) is not a row number"):
        pate_cli.analyze(VOTES, "gnmax", query_indices=[0.0, 2.5])


def test_results_and_decisions_compare_by_value_and_keep_no_caller_array():
    """``==`` had raised ValueError (arrays compared); ``orders`` was the caller's array."""
    grid = np.array([2.0, 4.0, 8.0])
    first, again = (pate_cli.analyze(VOTES, "gnmax", orders=grid) for _ in range(2))
    assert first == again and first != pate_cli.analyze(VOTES, "gnmax", orders=grid, seed=1)
    grid[0] = 3.0
    assert first.orders[0] == 2.0 and first.orders is not grid
    assert pate_cli.label(VOTES, "gnmax") == pate_cli.label(VOTES, "gnmax")
    with pytest.raises(TypeError):
        hash(first)


def test_a_mechanism_object_is_charged_as_the_same_by_name():
    """ConfidentGNMax(200, 150, 40) had been charged the Gaussian threshold curve (no M),
    where the mechanism by name had the exact one, with the same params in the JSON."""
    votes = np.load(SAMPLES / "mnist_250_votes.npy")[:640]
    named = pate_cli.analyze(votes, "confident", threshold=200, sigma_threshold=150,
                             sigma=40, accounting="expected")
    built = pate_cli.analyze(votes, pate_cli.ConfidentGNMax(200, 150, 40),
                             accounting="expected")
    assert built.epsilon == named.epsilon == pytest.approx(1.4579069634978912, rel=1e-12)


def test_label_refuses_multilabel_runs():
    with pytest.raises(pate_cli.OptionError, match="label\\(\\) does not apply to multi-label"):
        pate_cli.label(np.stack([VOTES[:, :2]] * 3, axis=1), "gnmax", multilabel="binary")


def test_a_boolean_mask_file_is_not_row_numbers(tmp_path):
    from pate_cli.inputs.query_indices import load_query_indices
    np.save(tmp_path / "mask.npy", np.ones(10, dtype=bool))
    with pytest.raises(InputError, match="holds true/false values .a mask., not row numbers"):
        load_query_indices(tmp_path / "mask.npy")


PREDICTIONS = np.random.default_rng(1).integers(0, 3, (40, 12))
GROUPS = [{"group": "a", "budget": 1.0}, {"group": "b", "budget": 2.0}]
TEACHER_GROUPS = ["a"] * 6 + ["b"] * 6


def _files(tmp_path) -> dict:
    """The same inputs as files, as the command reads them."""
    import pandas as pd
    np.save(tmp_path / "p.npy", PREDICTIONS)
    pd.DataFrame(GROUPS).to_csv(tmp_path / "g.csv", index=False)
    pd.DataFrame({"teacher": range(12), "group": TEACHER_GROUPS}).to_csv(
        tmp_path / "t.csv", index=False)
    np.save(tmp_path / "d.npy", np.arange(50) % 3)
    (tmp_path / "r.json").write_text('[{"rows": "0:25", "mechanism": "gnmax"}, '
                                     '{"rows": "25:50", "mechanism": "lnmax"}]')
    return {name: str(tmp_path / name) for name in ("p.npy", "g.csv", "t.csv", "d.npy",
                                                      "r.json")}


def test_inputs_given_as_objects_are_the_files(tmp_path):
    """predictions, decisions, rounds, groups and teacher groups given to the API as arrays,
    lists, mappings or DataFrames give the file's figures (each raised 'expected str,
    bytes or os.PathLike object' or "'numpy.int64' object is not iterable")."""
    import pandas as pd
    files = _files(tmp_path)
    pairs = [
        (dict(votes=None, predictions=PREDICTIONS.tolist()),
         dict(votes=None, predictions=files["p.npy"])),
        (dict(decisions=(np.arange(50) % 3).tolist()), dict(decisions=files["d.npy"])),
        (dict(rounds=[{"rows": "0:25", "mechanism": "gnmax"},
                      {"rows": list(range(25, 50)), "mechanism": "lnmax"}]),
         dict(rounds=files["r.json"])),
        (dict(votes=None, predictions=PREDICTIONS, individualized="weighting",
              groups=pd.DataFrame(GROUPS), teacher_groups=TEACHER_GROUPS),
         dict(votes=None, predictions=files["p.npy"], individualized="weighting",
              groups=files["g.csv"], teacher_groups=files["t.csv"])),
        (dict(votes=None, predictions=PREDICTIONS, individualized="vanishing", groups=GROUPS,
              teacher_groups=np.repeat(["a", "b"], 6)),
         dict(votes=None, predictions=files["p.npy"], individualized="vanishing",
              groups=files["g.csv"], teacher_groups=files["t.csv"])),
    ]
    for given, read in pairs:
        mechanism = None if "rounds" in given else "gnmax"  # each round names its own
        found = [pate_cli.analyze(options.pop("votes", VOTES), mechanism, sigma=8, **options)
                 for options in (given, read)]
        assert found[0].epsilon == found[1].epsilon
        assert np.array_equal(found[0].answered, found[1].answered)
        assert found[0].to_dict()["input"]["path"] is None


@pytest.mark.parametrize("options, message", [
    (dict(predictions=[[1, 2], [1]]), "the predictions array: not a table of numbers"),
    (dict(predictions=np.array([["a", "b"]])), "the predictions array: holds <U1 values"),
    (dict(predictions=PREDICTIONS, individualized="weighting", groups=GROUPS,
          teacher_groups=[0, 1]), "the teacher groups: expected one group per teacher \\(12\\)"),
    (dict(predictions=PREDICTIONS, individualized="weighting", groups=GROUPS,
          teacher_groups=["a"] * 6 + ["c"] * 6), "teacher 6: unknown group 'c' \\(the groups"),
    # integers are names, as in the file (they were row indices: 2 named the third group
    # in an array and the group called "2" in a file)
    (dict(predictions=PREDICTIONS, individualized="weighting", groups=GROUPS,
          teacher_groups=[0] * 12), "teacher 0: unknown group '0'"),
    (dict(predictions=PREDICTIONS, individualized="weighting", groups=GROUPS,
          teacher_groups=["a"] * 12), "no teacher belongs to group 'b'"),
    (dict(predictions=PREDICTIONS, individualized="weighting", groups=GROUPS,
          teacher_groups=[["a"], ["a", "b"]]), "expected one group name per teacher"),
    (dict(predictions=PREDICTIONS, individualized="weighting", groups=[],
          teacher_groups=["a"] * 12), "the groups table: lists no groups"),
    (dict(predictions=PREDICTIONS, individualized="upsampling",
          groups=[{"group": "a", "budget": -1}]), "the groups table: group 'a': budget -1"),
    (dict(predictions=PREDICTIONS, rounds=[{"rows": "0:25"}]),
     "the rounds: round 0: missing 'mechanism'"),
    (dict(predictions=PREDICTIONS, rounds=[1, 2]), "the rounds: expected a list of mappings"),
    (dict(predictions=PREDICTIONS, decisions=[[1, 2], [1]]),
     "<decisions>: expected one decision per query"),
])
def test_objects_given_to_the_api_are_checked_as_files_are(options, message):
    with pytest.raises(InputError, match=message):
        pate_cli.analyze(None, None if "rounds" in options else "gnmax", sigma=8, **options)


def test_rounds_given_as_mappings_take_what_a_file_takes():
    """Mechanism names in any case; a student array in an interactive round (it was
    joined to a path: the whole array in the message); a student in another round and a
    boolean parameter are refused (they were ignored, or taken as 1)."""
    student = np.full((50, 5), 0.2)
    rounds = [{"rows": "0:25", "mechanism": "GNMax", "sigma": 8},
              {"rows": np.arange(25, 50), "mechanism": "interactive", "student": student}]
    mixed = pate_cli.analyze(VOTES, rounds=rounds)
    assert [r["mechanism"] for r in mixed.to_dict()["rounds"]] == ["gnmax", "interactive"]
    for bad, message in (({"sigma": True}, "sigma True is not a number"),
                         ({"student": student}, "a student applies to interactive rounds")):
        with pytest.raises(InputError, match=message) as error:
            pate_cli.analyze(VOTES, rounds=[{"rows": "0:25", "mechanism": "gnmax", **bad}])
        assert "\n" not in str(error.value)


def test_integer_group_names_mean_the_same_in_an_array_and_a_file(tmp_path):
    """Groups called 2, 1, 0: an integer array names them as the file's cells do."""
    import pandas as pd
    groups = pd.DataFrame({"group": [2, 1, 0], "budget": [1.0, 2.0, 3.0]})
    named = np.repeat([2, 1, 0], 4)
    pd.DataFrame({"teacher": range(12), "group": named}).to_csv(tmp_path / "t.csv",
                                                                  index=False)
    found = [pate_cli.analyze(None, "gnmax", sigma=8, predictions=PREDICTIONS,
                              individualized="weighting", groups=groups, teacher_groups=given)
             for given in (named, str(tmp_path / "t.csv"))]
    assert found[0].epsilon == found[1].epsilon
    assert found[0].to_dict()["groups"] == found[1].to_dict()["groups"]


def test_decisions_as_a_series_or_a_dataframe_are_the_files():
    """A Series of labels and a DataFrame of a decisions file's columns (both raised
    'expected str, bytes or os.PathLike object')."""
    import pandas as pd
    made = pate_cli.label(VOTES, "confident", threshold=8, sigma_threshold=2, sigma=4, seed=0)
    table = pd.DataFrame({"query": range(50),
                          "outcome": np.where(made.label >= 0, "answered", "refused"),
                          "label": made.label})
    found = [pate_cli.analyze(VOTES, "confident", threshold=8, sigma_threshold=2, sigma=4,
                              decisions=given).epsilon
             for given in (made, pd.Series(made.label), table)]
    assert found[0] == found[1] == found[2]
    with pytest.raises(InputError, match="the decisions table: expected the header"):
        pate_cli.analyze(VOTES, "confident", decisions=table.rename(columns={"label": "x"}))


def test_add_rdp_as_a_dataframe_is_the_file(tmp_path):
    """A DataFrame order,rdp is read as the file is (it was flattened: '6 RDP values for 3
    orders'); a 2-D array names its shape (it said '2 RDP values for 2 orders')."""
    import pandas as pd
    table = pd.DataFrame({"order": [2, 4, 8], "rdp": [0.01, 0.02, 0.03]})
    table.to_csv(tmp_path / "r.csv", index=False)
    found = [pate_cli.analyze(VOTES, "gnmax", sigma=8, orders=[2, 4, 8], add_rdp=given)
             for given in (table, str(tmp_path / "r.csv"))]
    assert found[0].epsilon == found[1].epsilon
    with pytest.raises(InputError, match=r"an array of shape \(1, 2\) for 2 orders"):
        pate_cli.analyze(VOTES, "gnmax", sigma=8, orders=[2, 4], add_rdp=np.array([[1., 2.]]))


def test_orders_as_text_are_read_as_the_option_is():
    """orders="2,4,8" (the option's text) was refused: 'orders must be numbers'."""
    found = [pate_cli.analyze(VOTES, "gnmax", sigma=8, orders=given).epsilon
             for given in ("2,4,8", [2, 4, 8], "2:4:2,8")]
    assert found[0] == found[1] == found[2]
    with pytest.raises(ValueError, match="--orders: 'x' is not a number"):
        pate_cli.analyze(VOTES, "gnmax", sigma=8, orders="2,x")


@pytest.mark.parametrize("given, shown", [([0, 1, np.nan] + [1] * 47, "label nan is"),
                                          ([0, 1, 2**63 - 1] + [1] * 47,
                                           "label 9223372036854775807 is")])
def test_a_bad_decision_is_shown_as_given(given, shown):
    """It was np.float64(nan), and 2^63 - 1 was shown as ...808 (its float)."""
    with pytest.raises(InputError, match=f"row 3: {shown} not a class number"):
        pate_cli.analyze(VOTES, "gnmax", sigma=8, decisions=given)


def test_multilabel_predictions_as_a_list_are_the_array():
    """A 3-D list raised 'expected str, bytes or os.PathLike object'."""
    predictions = (np.random.default_rng(0).random((20, 30, 4)) < 0.3).astype(int)
    found = [pate_cli.analyze(None, "gnmax", sigma=10, predictions=given,
                              multilabel="binary").epsilon
             for given in (predictions, predictions.tolist(), predictions.astype(bool))]
    assert found[0] == found[1] == found[2]


@pytest.mark.parametrize("votes, options", [
    ("tokens_zipf.npz", dict(mechanism="exponential", eta=0.1)),
    ("tokens_stdlib.npz", dict(mechanism="confident", threshold=90, sigma_threshold=50,
                               sigma=25, budget=6))])
def test_the_data_dependent_figure_is_never_above_the_data_independent_one(votes, options):
    """Capped curves summed in another order left the data-independent figure 1e-14
    below the run's (31.372925464970535 against 31.37292546497023)."""
    from tests import SAMPLES
    done = pate_cli.analyze(str(SAMPLES / votes), **options)
    assert done.epsilon <= done.epsilon_data_independent


def test_a_scipy_sparse_matrix_is_the_sparse_file(tmp_path):
    """It said 'holds object values that are not numbers'; a CSR or COO matrix now gives
    the saved file's figures, checked as the file is."""
    import scipy.sparse
    matrix = scipy.sparse.csr_matrix(VOTES)
    scipy.sparse.save_npz(tmp_path / "v.npz", matrix)
    found = [pate_cli.analyze(given, "gnmax", sigma=8).epsilon
             for given in (matrix, matrix.tocoo(), str(tmp_path / "v.npz"), VOTES)]
    assert found[0] == found[1] == found[2] == found[3]
    with pytest.raises(InputError, match="the sparse votes: query 0 has no entries"):
        pate_cli.analyze(scipy.sparse.csr_matrix(np.zeros((3, 4))), "gnmax", sigma=8)


@pytest.mark.parametrize(("counts", "teachers", "message"), [
    ([0, 0], None, "query 0 has no votes (its counts sum to 0; every query's votes sum to "
                   "the number of teachers M)"),
    ([0, 5], None, "query 0 has no votes"),
    ([0, 0], 5, "every vote is 0 (every query's counts sum to 0): no teacher voted"),
])
def test_sparse_votes_whose_counts_sum_to_zero_are_refused(tmp_path, counts, teachers,
                                                           message):
    """Explicit zero entries (a long table's rows, a stored 0 in a save_npz archive) gave a
    number, over 0 teachers: refused as the dense zeros are, in their words."""
    import scipy.sparse
    table = tmp_path / "votes.csv"
    table.write_text(f"query,class,count\n0,0,{counts[0]}\n1,0,{counts[1]}\n")
    archive = tmp_path / "votes.npz"
    scipy.sparse.save_npz(archive, scipy.sparse.csr_matrix(
        (np.array(counts, dtype=float), np.array([0, 0]), np.array([0, 1, 2])), shape=(2, 10)))
    for path in (table, archive):
        with pytest.raises(InputError, match=re.escape(f"{path}: {message}")):
            pate_cli.analyze(str(path), "gnmax", sigma=1, classes=10, teachers=teachers)


_ORDERS = np.array([2.0, 8.0])


@pytest.mark.parametrize("call, kind, message", [
    # sigma whose square overflowed or vanished: OverflowError, or log q NaN
    (lambda: pate_cli.log_q_gnmax(VOTES, sigma=1e300), ValueError, r"sigma must lie in \[1e-150"),
    (lambda: pate_cli.log_q_gnmax(VOTES, sigma=1e-200), ValueError, "sigma must lie in"),
    (lambda: pate_cli.rdp_threshold_data_independent(sigma_threshold=1e300, orders=_ORDERS),
     ValueError, "sigma_threshold must lie in"),
    # NaN, infinite or negative counts gave NaN or a number from nonsense
    (lambda: pate_cli.log_q_gnmax([[np.nan, 1.0, 2.0]], sigma=10.0), ValueError,
     "votes must be finite, non-negative counts"),
    (lambda: pate_cli.log_q_gnmax([[np.inf, 1.0, 2.0]], sigma=10.0), ValueError,
     "votes must be finite"),
    (lambda: pate_cli.log_q_lnmax([[-3.0, 1.0, 2.0]], scale=10.0), ValueError,
     "votes must be finite, non-negative counts"),
    # an RDP curve that is NaN or negative gave NaN or an epsilon from nonsense
    (lambda: pate_cli.rdp_to_epsilon([np.nan, 1.0], orders=_ORDERS, delta=1e-5), ValueError,
     "an RDP curve must be >= 0 at every order"),
    (lambda: pate_cli.rdp_to_epsilon([-5.0, -1.0], orders=_ORDERS, delta=1e-5), ValueError,
     "an RDP curve must be >= 0 at every order"),
    (lambda: pate_cli.analyze(VOTES, "svt", individualized="upsampling",
                              groups=[{"group": "a", "budget": 1.0}]), OptionError,
     "--individualized supports -m gnmax, confident and interactive"),
    (lambda: pate_cli.load_groups([{"group": "a", "budget": 1.0, "share": 0.5},
                                   {"group": "b", "budget": 2.0, "share": 1.0}]), InputError,
     "the groups' shares sum to 1.5, above 1"),
])
def test_a_kernel_or_loader_refuses_values_outside_its_domain(call, kind, message):
    """Found by a fuzzer of the Python API: each was an OverflowError, a NaN or a number."""
    with pytest.raises(kind, match=message):
        call()


def test_a_gap_beyond_the_floats_gives_log_q_minus_infinity_not_nan():
    votes = np.array([[1e201, 3e200, 2e200], [5.0, 5.0, 5.0]])
    log_q = pate_cli.log_q_gnmax(votes, sigma=10.0)
    assert log_q[0] == -np.inf and log_q[1] == pytest.approx(np.log(2 / 3))
    assert pate_cli.rdp_to_epsilon([np.inf, 1.0], orders=_ORDERS, delta=1e-5)[0] < np.inf


def test_load_votes_refuses_a_query_count_below_one(tmp_path):
    path = tmp_path / "v.npy"
    np.save(path, VOTES)
    for queries in (0, -1, 2.5):
        with pytest.raises(OptionError, match="--queries must be a whole number >= 1"):
            pate_cli.load_votes(path, queries=queries)
    assert pate_cli.load_groups([{"group": "a", "budget": 1.0, "share": 0.34},
                                 {"group": "b", "budget": 2.0, "share": 0.67}]).share.sum() \
        == pytest.approx(1.01)  # rounded shares may exceed 1 by the rounding


@pytest.mark.parametrize("sigma", [True, "40"])
def test_a_noise_parameter_is_a_number_not_a_bool_or_a_text(sigma):
    """``sigma=True`` had run at sigma 1 (epsilon 10.14) and ``sigma="40"`` at 40."""
    with pytest.raises(ValueError, match="sigma must be a number, got"):
        pate_cli.analyze(VOTES, "gnmax", sigma=sigma)
    assert pate_cli.analyze(VOTES, "gnmax", sigma=np.array(40.0)).to_dict() == \
        pate_cli.analyze(VOTES, "gnmax", sigma=40).to_dict()


def test_hand_built_decisions_are_checked_as_a_decisions_array():
    """A ``Decisions`` of lists raised numpy's TypeError; one with label -5, or of fields of
    different lengths, was taken (review R32). Lists read as arrays; the rest is refused."""
    made = pate_cli.label(VOTES, "confident", threshold=10, sigma_threshold=2, sigma=1)
    as_lists = pate_cli.Decisions(answered=made.answered.tolist(), label=made.label.tolist())
    assert (pate_cli.analyze(VOTES, "confident", threshold=10, sigma_threshold=2, sigma=1,
                             decisions=as_lists).epsilon
            == pate_cli.analyze(VOTES, "confident", threshold=10, sigma_threshold=2, sigma=1,
                                decisions=made).epsilon)
    label = made.label.copy()
    label[0] = -5
    with pytest.raises(InputError, match="row 1: label -5 is not a class number"):
        pate_cli.analyze(VOTES, "confident", decisions=pate_cli.Decisions(
            answered=made.answered, label=label))
    with pytest.raises(InputError, match="1-D arrays of one length"):
        pate_cli.analyze(VOTES, "confident", decisions=pate_cli.Decisions(
            answered=made.answered, label=made.label[:-1]))
    whole = pate_cli.Decisions(answered=made.answered, label=made.label.astype(float))
    assert (pate_cli.analyze(VOTES, "confident", threshold=10, sigma_threshold=2, sigma=1,
                             decisions=whole).epsilon
            == pate_cli.analyze(VOTES, "confident", threshold=10, sigma_threshold=2, sigma=1,
                                decisions=made).epsilon)
    with pytest.raises(InputError, match="label 0.5 is not a class number"):  # (cut to 0)
        pate_cli.analyze(VOTES, "confident", decisions=pate_cli.Decisions(
            answered=made.answered, label=made.label + 0.5))


def test_empty_votes_rounds_tables_and_rdp_mappings_as_the_files_are(tmp_path):
    """analyze_votes on no rows raised IndexError; rounds as a DataFrame and add_rdp as a
    mapping raised TypeError (review R32). The first is one clear error; the others read as
    their files do."""
    import pandas as pd
    with pytest.raises(ValueError, match="the votes have no queries"):
        analyze_votes(np.zeros((0, 5)), pate_cli.GNMax(40))
    table = pd.DataFrame({"rows": ["0:20", "20:50"], "mechanism": ["gnmax", "lnmax"],
                          "sigma": ["3", ""], "laplace_scale": ["", "2"]})
    path = tmp_path / "rounds.csv"
    table.to_csv(path, index=False)
    assert (pate_cli.analyze(VOTES, rounds=table).to_dict()["epsilon"]
            == pate_cli.analyze(VOTES, rounds=path).to_dict()["epsilon"])
    curve = pd.DataFrame({"order": [2.0, 4.0], "rdp": [0.1, 0.2]})
    assert (pate_cli.analyze(VOTES, "gnmax", orders="2,4", add_rdp={2: 0.1, 4: 0.2}).epsilon
            == pate_cli.analyze(VOTES, "gnmax", orders="2,4", add_rdp=curve).epsilon)
    with pytest.raises(InputError, match="gives {order: rdp}"):
        pate_cli.analyze(VOTES, "gnmax", add_rdp={"event": "gaussian"})


def test_audit_takes_rows_as_lists_as_analyze_does():
    """``audit(list)`` said load_votes reads a path (review R32)."""
    rows = VOTES.tolist()
    given = pate_cli.audit(rows, "gnmax", sigma=4, draws=2000, seed=1)
    array = pate_cli.audit(VOTES, "gnmax", sigma=4, draws=2000, seed=1)
    assert (given.epsilon_lower, given.epsilon_upper) == (array.epsilon_lower,
                                                          array.epsilon_upper)
    assert np.array_equal(given.counts, array.counts)
