"""pate-report: every section for every mechanism, numbers equal to pate-analyze's JSON,
well-formed standalone HTML, escaping, Markdown with report_files/, --from, errors."""

from __future__ import annotations

import json
import re
import warnings
from html.parser import HTMLParser

import pytest

from tests import SAMPLES

pytest.importorskip("jinja2")

from pate_cli import analyze  # noqa: E402
from pate_cli.accounting.conversion import rdp_to_epsilon  # noqa: E402
from pate_cli.orders import default_orders  # noqa: E402
from pate_cli.outputs.report_content import SECTIONS  # noqa: E402
from pate_cli.outputs.report_statement import epsilon_text, headline, number  # noqa: E402
from pate_cli.rounding import ceil_text  # noqa: E402

VOTES = str(SAMPLES / "mnist_250_votes.npy")
RUNS = {
    "gnmax": [VOTES, "-m", "gnmax", "--sigma", "40", "-n", "300", "--budget", "1"],
    "lnmax": [VOTES, "-m", "lnmax", "-n", "300", "--accounting", "expected"],
    "confident": [VOTES, "-n", "640", "--smooth-sensitivity"],
    "interactive": [VOTES, "-m", "interactive", "--student",
                    str(SAMPLES / "mnist_250_student.npy"), "-n", "300"],
    "svt": [VOTES, "-m", "svt", "--target-epsilon", "8", "--svt-cutoff", "10", "-n", "2000"],
    "individualized": [VOTES, "--individualized", "upsampling", "--groups",
                       str(SAMPLES / "mnist_250_groups.csv"), "-n", "400"],
}
VOID = {"meta", "br", "hr", "img", "input", "link"}


class Page(HTMLParser):
    """Checks nesting; collects key figures, src/href values, scripts and text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.figures, self.links, self.scripts = [], [], {}, [], []
        self.sections, self.text, self._script = [], [], None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        for name in ("src", "href", "xlink:href"):
            if name in attributes:
                self.links.append(attributes[name])
        if "data-key" in attributes:
            self.figures[attributes["data-key"]] = attributes["data-value"]
        if tag == "section":
            self.sections.append(attributes.get("id"))
        if tag == "script":
            self.scripts.append(attributes)
            self._script = []
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()
        if tag == "script":
            self.script_text = "".join(self._script)
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self._script.append(data)
        else:
            self.text.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each mechanism's HTML report and pate-analyze's JSON for the same options."""
    import pytest as _pytest

    from pate_cli.cli.analyze import main as analyze_main
    from pate_cli.cli.report import main as report_main

    folder = tmp_path_factory.mktemp("reports")
    made = {}
    for name, args in RUNS.items():
        html, summary = folder / f"{name}.html", folder / f"{name}.json"
        for main, extra in ((report_main, ["-o", str(html)]),
                            (analyze_main, ["-f", "json", "-o", str(summary)])):
            with _pytest.raises(SystemExit) as done:
                main([*args, *extra])
            assert done.value.code == 0, (name, main)
        made[name] = (html.read_text(encoding="utf-8"),
                      json.loads(summary.read_text(encoding="utf-8")))
    return made


@pytest.mark.parametrize("name", list(RUNS))
def test_every_section_for_every_mechanism(reports, name):
    page = parse(reports[name][0])
    assert page.sections == list(SECTIONS)
    text = " ".join(page.text)
    for phrase in ("teacher-partition level", "Privacy unit:", "Neighbouring relation:",
                   "differential privacy, derived from Rényi DP", "tool version",
                   "input sha256", "Reporting checklist"):
        assert phrase in text, (name, phrase)


@pytest.mark.parametrize("name", list(RUNS))
def test_numbers_equal_the_json_summary(reports, name):
    html, summary = reports[name]
    page = parse(html)
    embedded = json.loads(page.script_text)
    assert embedded == summary
    for key, value in page.figures.items():
        expected = summary
        for part in key.split("."):  # (a group row's figure: groups.<index>.<key>)
            expected = expected[int(part)] if isinstance(expected, list) else expected[part]
        if expected is None:  # e.g. SVT's order under the pure-DP bound (null in JSON)
            assert value == "", key
            continue
        assert float(value) == expected, key
    assert float(page.figures["epsilon"]) == summary["epsilon"]
    assert summary["input"]["sha256"] in html


@pytest.mark.parametrize("name", list(RUNS))
def test_html_is_well_formed_and_standalone(reports, name):
    html = reports[name][0]
    page = parse(html)
    assert not page.errors and page.stack == []
    assert all(not re.match(r"\s*(https?:|//)", link) for link in page.links), page.links
    assert [s.get("type") for s in page.scripts] == ["application/json"]
    assert "<link" not in html and "@import" not in html
    assert re.findall(r"url\((?!#)", html) == []  # only references inside the page
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    figures = html.count("<svg")
    assert figures >= (0 if name == "svt" else 1)


def test_headline_sanitised_data_independent_and_warning(reports):
    confident = " ".join(parse(reports["confident"][0]).text)
    summary = reports["confident"][1]
    sanitised = summary["smooth_sensitivity"]["sanitized_epsilon"]
    assert f"ε = {ceil_text(sanitised)}".rstrip("0") in confident
    # the unsanitised figures are in the warning, not in the sentence to publish
    head = headline(summary)
    smooth = summary["smooth_sensitivity"]
    for figure in (epsilon_text(smooth["epsilon_after"]), number(smooth["noise_std"]),
                   epsilon_text(summary["epsilon"])):
        assert figure not in head["text"], figure
    assert "Publish the sanitised ε = " in head["warning"] and head["sanitised"]
    gnmax_html, gnmax = reports["gnmax"]
    text = " ".join(parse(gnmax_html).text)
    assert 'id="data-dependent-warning"' in gnmax_html
    assert "a data-independent bound" in text
    assert "answers refused from query" in text or "halted before query" in text
    svt = " ".join(parse(reports["svt"][0]).text)
    assert "does not depend on the votes" in svt and "Warning" not in svt
    groups = " ".join(parse(reports["individualized"][0]).text)
    assert "per privacy group" in groups and "exhausted" in groups


def test_group_names_are_escaped(cli, tmp_path):
    groups = tmp_path / "groups.csv"
    groups.write_text('group,budget\n<script>alert(1)</script>,1\n"a|b & c",2\n')
    html, markdown = tmp_path / "r.html", tmp_path / "r.md"
    args = [VOTES, "--individualized", "upsampling", "--groups", groups, "-n", "200"]
    assert cli.report(*args, "-o", html).code == 0
    assert cli.report(*args, "-o", markdown).code == 0
    text = html.read_text()
    page = parse(text)
    assert [s.get("type") for s in page.scripts] == ["application/json"]
    assert "<script>alert" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<script>alert(1)</script>" in " ".join(page.text)  # shown as text
    assert not page.errors
    md = markdown.read_text()
    assert "<script>" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "a\\|b &amp; c" in md  # the pipe does not split the table cell


def test_markdown_writes_figures_beside_it(cli, tmp_path):
    out = tmp_path / "report.md"
    result = cli.report(VOTES, "-n", "300", "--accounting", "expected", "-o", out)
    assert result.code == 0, result.err
    files = sorted(p.name for p in (tmp_path / "report_files").iterdir())
    assert files == ["history.svg", "risk.svg", "selection.svg"]
    text = out.read_text()
    assert "![Cumulative privacy cost](report_files/history.svg)" in text
    assert "![Trade-off curve: what a membership attacker can reach](report_files/risk.svg)" \
        in text
    for section in ("## Guarantee", "## Privacy unit", "## DP definition", "## Mechanism",
                    "## Accounting", "## Attack risk", "## Budget and halt", "## Privacy groups",
                    "## Hyperparameter tuning", "## Figures", "## Reproduction",
                    "## Reporting checklist"):
        assert section in text
    summary = json.loads(cli.analyze(VOTES, "-n", "300", "--accounting", "expected",
                                     "-f", "json").out)
    row = re.search(r"\| data-dependent ε \(unsanitised: not for publication\) \| "
                    r"([0-9.]+) \|", text).group(1)
    assert row == ceil_text(summary["epsilon"]).rstrip("0").rstrip(".")


def test_a_vacuous_risk_is_said_to_rule_out_no_attack(cli, tmp_path):
    """LNMax at scale 10 over the sample: every bound prints as 1.0000; the report says the
    guarantee is vacuous (a table of ones alone reads as a figure like others)."""
    vacuous, other = tmp_path / "vacuous.md", tmp_path / "other.md"
    assert cli.report(VOTES, "-m", "lnmax", "--laplace-scale", "10", "-o", vacuous).code == 0
    assert cli.report(VOTES, "-n", "300", "-o", other).code == 0
    sentence = "Every bound below rounds to 1: at these rates the guarantee is vacuous."
    assert sentence in vacuous.read_text() and sentence not in other.read_text()


def test_a_markdown_report_leaves_no_figure_of_an_earlier_one(cli, tmp_path):
    """Written again over an earlier report, a Markdown report removes the figures it does
    not draw from its folder (a history beside a report without a table would be another
    run's); files the user put there stay."""
    out, summary = tmp_path / "report.md", tmp_path / "s.json"
    assert cli.report(VOTES, "-n", "300", "-o", out).code == 0
    folder = tmp_path / "report_files"
    assert (folder / "history.svg").exists()
    (folder / "notes.txt").write_text("mine")
    assert cli.analyze(VOTES, "-n", "200", "-f", "json", "-o", summary).code == 0
    result = cli.report("--from", summary, "-o", out)
    assert result.code == 0, result.err
    files = sorted(p.name for p in folder.iterdir())
    assert "history.svg" not in files and "notes.txt" in files
    assert all(f"report_files/{name}" in out.read_text() for name in files
               if name.endswith(".svg"))


def test_a_summary_and_a_table_from_standard_input(cli, tmp_path):
    """``--from -`` reads the summary from standard input (as pate-plot's ``--summary -``
    and ``tradeoff-curve -`` do), ``--per-query -`` the table: the same report as from
    the files."""
    summary, table = tmp_path / "s.json", tmp_path / "q.csv"
    assert cli.analyze(VOTES, "-n", "200", "--per-query", table, "-f", "json", "-o",
                       summary).code == 0
    files = cli.report("--from", summary, "--per-query", table, "-o", tmp_path / "a.md")
    piped = cli.report("--from", "-", "--per-query", table, "-o", tmp_path / "b.md",
                       stdin=summary.read_bytes())
    table_piped = cli.report("--from", summary, "--per-query", "-", "-o", tmp_path / "c.md",
                             stdin=table.read_bytes())
    assert files.code == piped.code == table_piped.code == 0, piped.err + table_piped.err

    def report(name: str) -> list[str]:  # but the command that wrote it, as given
        text = (tmp_path / f"{name}.md").read_text().replace(f"{name}_files", "X")
        return [line for line in text.splitlines() if "pate-report --from" not in line]

    assert report("b") == report("a") == report("c")
    curve = cli.plot("tradeoff-curve", "-", "-o", tmp_path / "t.svg",
                     stdin=summary.read_bytes())
    assert curve.code == 0, curve.err


def test_from_summary_and_per_query(cli, tmp_path):
    summary, table = tmp_path / "run.json", tmp_path / "q.csv"
    assert cli.analyze(VOTES, "-n", "300", "-f", "json", "-o", summary,
                       "--per-query", table).code == 0
    out = tmp_path / "from.html"
    result = cli.report("--from", summary, "--per-query", table, "--dataset-size", "60000",
                        "-o", out)
    assert result.code == 0, result.err
    text = out.read_text()
    page = parse(text)
    assert json.loads(page.script_text) == json.loads(summary.read_text())
    assert text.count("<svg") >= 1
    assert "is below 1/N" in " ".join(page.text)
    assert "pate-report --from" in text


@pytest.mark.parametrize("args, message", [
    (["-o", "r.pdf"], "the extension picks the report format"),
    (["--from", "s.json", "-o", "r.html"], "give VOTES (to analyse) or --from SUMMARY"),
    (["--per-query", "q.csv", "-o", "r.html"], "--per-query applies to --from SUMMARY"),
    (["--accounting", "expected", "--decisions", "d.csv", "-o", "r.html"], "Error:"),
])
def test_bad_options_exit_2_without_output(cli, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    result = cli.report(VOTES, *args)
    assert result.code == 2 and message in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "named"), [
    (["--delta", "1e-3", "-m", "gnmax", "--smooth-sensitivity", "--budget", "1", "--seed", "5",
      "--labels", "y.npy"],
     "--labels, -m/--mechanism, --delta, --seed, --budget, --smooth-sensitivity"),
    (["--seed", "0"], "--seed"),  # given, even at the default's value
    (["-T", "100"], "-T/--threshold"),
])
def test_from_refuses_analysis_options(cli, tmp_path, args, named):
    """--from reports the summary as it is: an analysis option would be ignored and then
    printed in the reproduction command, so it is refused, named."""
    summary = tmp_path / "run.json"
    assert cli.analyze(VOTES, "-n", "100", "-f", "json", "-o", summary).code == 0
    result = cli.report("--from", summary, *args, "-o", tmp_path / "r.html")
    assert (result.code, result.out) == (2, "")
    assert result.err == ("Error: --from reports the summary as it is: it takes no analysis "
                          f"options (given: {named}; to analyse, give VOTES instead) (see "
                          "pate-report --help)\n")
    assert not (tmp_path / "r.html").exists()
    kept = cli.report("--from", summary, "--max-epsilon", "100", "--dataset-size", "60000",
                      "-o", tmp_path / "r.html")
    assert kept.code == 0, kept.err


def test_missing_summary_is_one_line(cli, tmp_path):
    result = cli.report("--from", tmp_path / "none.json", "-o", tmp_path / "r.html")
    assert result.code == 2 and result.err.startswith("Error: ")
    assert not (tmp_path / "r.html").exists()


def test_from_a_table_with_a_bad_cell_names_its_row(cli, tmp_path):
    """The table's drawn columns are checked cell by cell, as pate-plot checks them: one
    line naming the row (it was numpy's "could not convert string to float")."""
    summary, table = tmp_path / "run.json", tmp_path / "q.csv"
    assert cli.analyze(VOTES, "-n", "300", "-f", "json", "-o", summary,
                       "--per-query", table).code == 0
    lines = table.read_text().splitlines()
    column = lines[0].split(",").index("epsilon_cumulative")
    cells = lines[121].split(",")
    cells[column] = "abc"
    lines[121] = ",".join(cells)
    table.write_text("\n".join(lines) + "\n")
    result = cli.report("--from", summary, "--per-query", table, "-o", tmp_path / "r.md")
    assert result.code == 2
    assert result.err == (f"Error: {table}: row 120: column 'epsilon_cumulative' has "
                          "'abc', not a number\n")
    assert not (tmp_path / "r.md").exists()


def test_help_and_version(cli):
    import pate_cli

    assert cli.report("--version").out == f"pate-report {pate_cli.__version__}\n"
    text = cli.report("-h").out
    assert "--from" in text and "--sigma" in text and "--dataset-size" in text


def test_same_inputs_same_bytes(cli, tmp_path):
    html, markdown = tmp_path / "r.html", tmp_path / "r.md"
    outputs = []
    for _ in range(2):
        args = [VOTES, "-n", "300", "--accounting", "expected"]
        assert cli.report(*args, "-o", html).code == 0
        assert cli.report(*args, "-o", markdown).code == 0
        outputs.append((html.read_bytes(), markdown.read_bytes(),
                        (tmp_path / "r_files" / "history.svg").read_bytes()))
    assert outputs[0] == outputs[1]


def test_keys_other_commands_add_are_reported(cli, tmp_path):
    """``decisions``, ``tuning`` and the halting ``budget`` keys, read from a summary."""
    summary = tmp_path / "run.json"
    assert cli.analyze(VOTES, "-n", "300", "-f", "json", "-o", summary).code == 0
    data = json.loads(summary.read_text())
    data["decisions"] = {"source": "imported", "path": "decisions.csv", "sha256": "ab" * 32}
    data["tuning"] = {"distribution": "poisson:10", "epsilon_tuned": 2.5}
    data["budget"] = {"limit": 2.0, "halted_at": 250, "remaining": 0.125, "answered": 140}
    summary.write_text(json.dumps(data))
    out = tmp_path / "r.html"
    assert cli.report("--from", summary, "-o", out).code == 0
    text = " ".join(parse(out.read_text()).text)
    assert "the user's decisions, read from decisions.csv" in text
    assert "a simulated run" not in text and "(of the simulated run)" not in text
    assert "halted before query 250" in text
    assert "Left of the budget on the data-dependent ε (unsanitised): 0.125" in text
    assert "\u03b5 with the search" in text and "poisson:10" in text
    assert "where the run stopped is itself a function of the votes" in text
    assert "No tuning cost is recorded" not in text
    data["budget"] = {"limit": 2.0, "stopped_at": 250, "answered": 140}
    summary.write_text(json.dumps(data))
    assert cli.report("--from", summary, "-o", out).code == 0
    assert "answers refused from query 250 on" in out.read_text()


def test_max_epsilon_exits_3_after_writing_the_report(cli, tmp_path):
    out = tmp_path / "r.html"
    result = cli.report(VOTES, "-n", "300", "--max-epsilon", "0.5", "-o", out)
    assert result.code == 3 and "exceeds --max-epsilon 0.5" in result.err
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_max_epsilon_gates_the_published_figure(cli, tmp_path):
    """A report's gate reads the epsilon its statement publishes (the data-independent
    bound here), not the run's data-dependent, unsanitised one, which is below the gate."""
    summary = json.loads(cli.analyze(VOTES, "-n", "300", "-f", "json").out)
    gate = (summary["epsilon"] + summary["epsilon_data_independent"]) / 2
    result = cli.report(VOTES, "-n", "300", "--max-epsilon", f"{gate}", "-o",
                        tmp_path / "r.md")
    published = min(summary["epsilon_data_independent_worst"],  # every query answered
                    summary["epsilon_data_independent_worst_pld"])  # the smaller bound
    assert result.code == 3 and result.err.startswith(
        f"Error: published epsilon {ceil_text(published)} exceeds")


def test_pld_figure_is_explained_in_the_dp_definition():
    pytest.importorskip("dp_accounting")
    from pate_cli import analyze
    from pate_cli.outputs.report_statement import epsilon_text, privacy_unit

    pld = analyze(VOTES, "gnmax", queries=640, accounting="data-independent").to_dict()
    assert pld["data_independent_method"] == "pld"
    text = privacy_unit(pld, dataset_size=None)["definition"]
    assert f"That conversion gives \u03b5 = {epsilon_text(pld['epsilon_rdp'])};" in text
    assert f"the reported \u03b5 = {epsilon_text(pld['epsilon'])} is smaller" in text
    rdp = analyze(VOTES, "confident", queries=640).to_dict()
    assert "PLD" not in privacy_unit(rdp, dataset_size=None)["definition"]


def _headline_and_checklist(cli, tmp_path, *args, votes=VOTES):
    out = tmp_path / "w.md"
    result = cli.report(*([] if votes is None else [votes]), *args, "-o", out)
    assert result.code == 0, result.err
    text = out.read_text()
    head = text.split("## Guarantee", 1)[1].split("\n\n", 2)[1]
    tuning = re.search(r"\| (ok|\*\*FLAG\*\*) \| Hyperparameter tuning accounted \| ([^|]*)\|",
                       text)
    return text, head, tuning.group(1), tuning.group(2)


def test_wording_tells_simulated_expected_and_user_decisions(cli, tmp_path):
    """Issue 30 item 4: a simulated replay says so (seed S), expected accounting is an
    estimate of an average run (no seed), the user's decisions are named as such."""
    text, head, _, _ = _headline_and_checklist(cli, tmp_path, "-n", "300")
    assert "a simulated run with seed 0" in head and "released labels" not in head.lower()
    text, head, _, _ = _headline_and_checklist(cli, tmp_path, "-n", "300", "--seed", "7")
    assert "a simulated run with seed 7" in head
    text, head, _, _ = _headline_and_checklist(cli, tmp_path, "-n", "300", "--accounting",
                                               "expected")
    # the published figure is the bound for any run; the data-dependent one an average
    assert "a data-independent bound that holds whatever a run answers" in head
    assert "is an expected figure, unsanitised" in head
    assert "seed" not in head and "| seed |" not in text
    assert "a data-independent bound" in head and "data-dependent" in head
    decisions = tmp_path / "mine.csv"
    assert cli.analyze(VOTES, "-n", "300", "--seed", "3", "--write-decisions",
                       decisions).code == 0
    text, head, _, _ = _headline_and_checklist(cli, tmp_path, "-n", "300", "--decisions",
                                               decisions)
    assert head.startswith("**The released labels satisfy") and "mine.csv" in head
    assert "a simulated run" not in head and "seed" not in head and "| seed |" not in text


def test_headline_includes_tuning_and_the_checklist_agrees(cli, tmp_path):
    """The tuned figure is in the headline; published (and ticked) only when it holds."""
    summary = json.loads(cli.analyze(VOTES, "-n", "300", "--accounting", "data-independent",
                                     "--tuning", "geometric:20", "-f", "json").out)
    text, head, mark, note = _headline_and_checklist(
        cli, tmp_path, "-n", "300", "--accounting", "data-independent", "--tuning",
        "geometric:20")
    tuned = ceil_text(summary["tuning"]["epsilon_tuned"])
    assert "hyperparameter search (a random search, K ~ geometric:20" in head
    # Confident's run composes its replay's answers: the search's bound for any run is
    # published, the tuned figure of those answers named as no bound
    assert f"the run's answers alone give ε = {tuned}, not a bound" in head
    any_run = ceil_text(summary["tuning"]["epsilon_tuned_data_independent"]).rstrip("0")
    assert f"ε = {any_run} at δ = 1e-05" in head
    assert mark == "ok" and "included in the published" in note

    # a data-dependent run (issue 43 item 7: its report put the untuned data-independent
    # 3.5472 in the headline and said the search was left out): the search's
    # data-independent bound, computed from the run's data-independent curve, is published
    for extra in ((), ("--accounting", "expected")):
        summary = json.loads(cli.analyze(VOTES, "-n", "640", "--tuning", "geometric:20",
                                         *extra, "-f", "json").out)
        text, head, mark, note = _headline_and_checklist(
            cli, tmp_path, "-n", "640", "--tuning", "geometric:20", *extra)
        tuning = summary["tuning"]
        alone = min(summary["epsilon_data_independent_worst"],  # every query answered
                    summary["epsilon_data_independent_worst_pld"])  # the smaller bound
        assert tuning["epsilon_tuned_data_independent"] > alone
        published = ceil_text(tuning["epsilon_tuned_data_independent"]).rstrip("0")
        assert head.startswith(f"**Labelling these votes with this mechanism and these "
                               f"parameters satisfies (ε, δ)-DP at the teacher-partition "
                               f"level: ε = {published} at δ = 1e-05")
        assert (f"including the hyperparameter search (a random search, K ~ geometric:20; "
                f"the run alone: {ceil_text(alone).rstrip('0')})") in head
        assert f"the data-dependent ε is {ceil_text(tuning['epsilon_tuned'])}" in head
        assert mark == "ok" and "included in the published" in note
        assert f"| data-independent ε with the search (published) | {published} |" in text
    orders = default_orders()
    from pate_cli.accounting.tuning import tuned_epsilon, tuning_distribution
    result = analyze(VOTES, "confident", queries=640, tuning="geometric:20", per_query=False)
    independent, _ = tuned_epsilon(result.rdp_data_independent, orders=orders, delta=1e-5,
                                   conversion="classic",
                                   distribution=tuning_distribution("geometric:20"))
    assert result.tuning.epsilon_tuned_data_independent == independent
    assert independent == pytest.approx(8.905238974567212, rel=1e-12)  # every query answered


def test_the_data_independent_figure_includes_the_added_rdp(cli, tmp_path):
    """``--add-rdp`` (an earlier DP-SGD student, say) is part of every figure: the
    data-independent one left it out (3.5472 beside a total of 5.1442)."""
    event = tmp_path / "g.json"
    event.write_text('{"class_name": "GaussianDpEvent", "noise_multiplier": 1.1}')
    for accounting in ("replay", "expected", "data-independent"):
        plain = analyze(VOTES, "confident", queries=640, accounting=accounting,
                        per_query=False)
        added = analyze(VOTES, "confident", queries=640, accounting=accounting,
                        add_rdp=str(event), per_query=False)
        assert added.epsilon_data_independent > plain.epsilon_data_independent
        # the curve a bound rests on (Confident: every query answered)
        bound = added.epsilon_data_independent_worst
        assert bound == pytest.approx(float(rdp_to_epsilon(
            plain.rdp_data_independent + added.initial_rdp, orders=plain.orders,
            delta=1e-5)[0]), rel=1e-12)
    rounds = analyze(VOTES, add_rdp=str(event), per_query=False,
                     rounds=str(SAMPLES / "mnist_250_rounds.csv"))
    assert rounds.epsilon_data_independent >= float(rdp_to_epsilon(
        rounds.initial_rdp, orders=rounds.orders, delta=1e-5)[0])


def test_groups_publish_their_data_independent_figures(cli, tmp_path):
    """Issue 30 item 5: each group's data-independent figure at the halt is the published
    one, beside the data-dependent figure; the table has both and the one over all
    queries."""
    # Confident's figures compose its replay's answers: each group's bound for any run is
    # published (tests/analysis/test_individualized_any_run.py), vanishing has none
    args = ["--individualized", "upsampling", "--groups",
            str(SAMPLES / "mnist_250_groups.csv"), "-n", "1500"]
    _, head, _, _ = _headline_and_checklist(cli, tmp_path, *args)
    assert head.startswith("**Labelling these votes with this mechanism and these parameters "
                           "satisfies (ε, δ)-DP at the teacher-partition level, per privacy "
                           "group, with ε = ")
    assert "compose the replay's answers" in head and "bounds at the halt" not in head
    assert "hold whatever a run answers and wherever it halts" in head
    vanishing = ["--predictions", str(SAMPLES / "mnist_250_predictions.npy"),
                 "--teacher-groups", str(SAMPLES / "mnist_250_teacher_groups.csv"),
                 "--individualized", "vanishing", "--groups",
                 str(SAMPLES / "mnist_250_groups.csv"), "-n", "600"]
    _, head, _, _ = _headline_and_checklist(cli, tmp_path, *vanishing, votes=None)
    assert head.startswith("**No per-group bound of (ε, δ)-DP at the teacher-partition level")
    from pate_cli.outputs.report_statement import epsilon_text  # rounded up, as printed
    args = ["-m", "gnmax", *args]  # under replay GNMax's stop is the data-dependent cost's
    summary = json.loads(cli.analyze(VOTES, *args, "-f", "json").out)
    _, head, _, _ = _headline_and_checklist(cli, tmp_path, *args)
    assert "stop where the data-dependent cost, a function of the votes, decides" in head
    for row in summary["groups"]:
        bound = epsilon_text(row["epsilon_data_independent_worst"])
        assert f"ε = {bound} for group {row['group']}" in head
    assert "The data-dependent figures, unsanitised and not for publication" in head
    # under data-independent accounting every query costs the same: the stop is the same
    # on any votes, and each group's figure at the halt is its bound
    args = [*args, "--accounting", "data-independent"]
    summary = json.loads(cli.analyze(VOTES, *args, "-f", "json").out)
    text, head, _, _ = _headline_and_checklist(cli, tmp_path, *args)
    assert "data-independent bounds at the halt" in head
    for row in summary["groups"]:
        assert row["epsilon_data_independent_worst"] is None
        independent = epsilon_text(row["epsilon_data_independent"])
        assert f"ε = {independent} for group {row['group']}" in head
        assert independent == ceil_text(row["epsilon_data_independent"]).rstrip("0")
        assert (f"| {independent} | "
                f"{epsilon_text(row['epsilon_data_independent_if_continued'])} |" in text)


def test_expected_accounting_publishes_a_bound_that_holds_for_any_run(cli, tmp_path):
    """Under expected accounting the data-independent figure at the expected count is an
    average, below the bound of a run that answers more (issue 30): the report publishes
    the bound with every query answered, at least the data-independent figure of the
    seeded replay's own decisions."""
    votes = SAMPLES / "mnist_250_votes.npy"
    report = tmp_path / "r.md"
    done = cli.run("pate-report", votes, "-n", 2000, "--accounting", "expected", "-o", report)
    assert done.code == 0, done.err
    summary = json.loads(cli.analyze(votes, "-n", 2000, "--accounting", "expected",
                                     "-f", "json").out)
    replayed = json.loads(cli.analyze(votes, "-n", 2000, "--accounting", "data-independent",
                                      "-f", "json").out)
    worst = summary["epsilon_data_independent_worst"]
    assert worst >= replayed.get("epsilon_rdp", replayed["epsilon"]) > 0
    assert summary["epsilon_data_independent"] < worst
    # the same bound by the Gaussian steps' privacy-loss distribution, smaller: published
    pld = summary["epsilon_data_independent_pld"]
    assert replayed["epsilon"] <= pld < worst
    headline = next(line for line in report.read_text().splitlines() if "satisf" in line)
    published = re.search("\u03b5 = ([0-9.]+) at", headline).group(1)
    assert published == ceil_text(pld)
    assert "holds whatever a run answers" in headline
    assert f"(their Rényi DP curve converted gives ε = {ceil_text(worst)})" in headline


def risk_section(html: str) -> str:
    return html[html.index('<section id="risk">'):].split("</section>", 1)[0]


@pytest.mark.parametrize("name", list(RUNS))
def test_attack_risk_section(reports, name):
    """The publishable bounds rounded up with their source (and mu), the trade-off figure;
    a data-dependent run's own bounds only under the unsanitised label; an individualized
    run's section says it has none."""
    html, summary = reports[name]
    section = risk_section(html)
    text = " ".join(parse(section + "</section>").text)
    independent, risk = summary["risk_data_independent"], summary["risk"]
    if independent is None:
        assert "No single attack risk" in text and "individualized" in text
        for row in summary["groups"]:  # each group's own bounds, rounded up
            assert f"advantage \u2264 {ceil_text(row['risk']['advantage'])}" in text
        assert "<svg" not in section
        return
    rows = re.findall(r'<td>([^<]*)</td><td class="number">([^<]*)</td>', section)
    expected = [(f"attacker's TPR at FPR {fpr}", ceil_text(tpr))
                for fpr, tpr in independent["tpr_at_fpr"].items()]
    expected.append(("advantage (largest TPR \u2212 FPR)", ceil_text(independent["advantage"])))
    # a data-dependent run's own bounds where they differ from the publishable ones
    dependent = (risk is not None and risk["data_dependent"]
                 and risk["tpr_at_fpr"] != independent["tpr_at_fpr"])
    if dependent:
        expected += [(f"attacker's TPR at FPR {fpr}", ceil_text(tpr))
                     for fpr, tpr in risk["tpr_at_fpr"].items()]
        expected.append(("advantage (largest TPR \u2212 FPR)", ceil_text(risk["advantage"])))
    assert rows == [(label.replace("'", "&#39;"), value) for label, value in expected]
    for _, value in rows:  # rounded up: never below the computed bound
        assert float(value) >= 0
    assert ("data-dependent, unsanitised: not for publication" in text) == dependent
    assert {"pld": "(PLD)", "rdp": "(RDP)", "pure": "pure-DP"}[independent["source"]] in text
    if independent["mu"] is not None:
        assert f"\u03bc = {ceil_text(independent['mu'])}" in text
    assert section.count("<svg") == 1 and 'id="figure-risk"' in section
    assert "data-dependent-0" not in section  # the published figure: no unsanitised curve


def test_attack_risk_rounding_is_up(cli, tmp_path):
    """A bound a hair above a 4-decimal value prints the next one up, in the text and the
    Markdown report alike."""
    summary = tmp_path / "run.json"
    assert cli.analyze(VOTES, "-n", "300", "-f", "json", "-o", summary).code == 0
    data = json.loads(summary.read_text())
    data["risk_data_independent"]["tpr_at_fpr"]["0.01"] = 0.12340000001
    data["risk_data_independent"]["advantage"] = 0.5
    summary.write_text(json.dumps(data))
    out = tmp_path / "r.md"
    assert cli.report("--from", summary, "-o", out).code == 0
    text = out.read_text()
    assert "| attacker's TPR at FPR 0.01 | 0.1235 |" in text
    assert "| advantage (largest TPR \u2212 FPR) | 0.5000 |" in text
    data["risk_data_independent"]["tpr_at_fpr"] = "0.1"  # damaged: refused, as pate-plot does
    summary.write_text(json.dumps(data))
    refused = cli.report("--from", summary, "-o", out)
    assert refused.code == 2
    assert refused.err.strip().endswith("'risk_data_independent' is not an attack risk of "
                                        "pate-analyze (no tpr_at_fpr object)"), refused.err
    del data["risk"], data["risk_data_independent"]  # a summary from before the risk keys
    summary.write_text(json.dumps(data))
    assert cli.report("--from", summary, "-o", out).code == 0
    assert "No attack risk: this summary records no attack risk" in out.read_text()


def test_a_figure_matplotlib_cannot_lay_out_is_one_warning_line(cli, tmp_path):
    """A summary whose Gaussian mu is 1e308 (hand-edited): any matplotlib warning (its
    two-line UserWarning with its source path, where the layout fails) is one 'Warning:'
    line, and none escapes the command (long legend labels now wrap, so this one lays
    out)."""
    done = cli.analyze(VOTES, "-m", "gnmax", "--sigma", "40", "-n", "300", "--accounting",
                       "data-independent", "-f", "json")
    summary = json.loads(done.out)
    summary["risk_data_independent"]["mu"] = 1e308
    (tmp_path / "s.json").write_text(json.dumps(summary))
    with warnings.catch_warnings():  # one that escaped the command now fails it
        warnings.simplefilter("error")
        made = cli.report("--from", tmp_path / "s.json", "-o", tmp_path / "r.html")
    assert made.code == 0, made.err
    lines = made.err.strip().splitlines()
    assert all(line.startswith("Warning: ") for line in lines)


def test_what_may_not_be_published_says_so(cli, tmp_path):
    """Under expected accounting the table's data-independent row is the bound for any
    run (the average at the expected count apart, named as one); figures drawn from the
    private votes (the selection histogram) or from a data-dependent run's costs carry
    "not for publication"; a data-independent run's cost history does not, but where a
    selection step's answers make it not a bound it says so (review R26 F7)."""
    out = tmp_path / "r.md"
    assert cli.report(VOTES, "-n", "300", "--accounting", "expected", "-o", out).code == 0
    text = out.read_text(encoding="utf-8")
    summary = json.loads(cli.analyze(VOTES, "-n", "300", "--accounting", "expected",
                                     "-f", "json").out)
    worst = ceil_text(summary["epsilon_data_independent_worst"]).rstrip("0").rstrip(".")
    pld = ceil_text(summary["epsilon_data_independent_pld"]).rstrip("0").rstrip(".")
    assert (f"| data-independent ε, privacy-loss distribution (any run: every query "
            f"answered) | {pld} |") in text
    assert f"| data-independent ε, Rényi DP (any run: every query answered) | {worst} |" in text
    assert ("| data-independent ε, Rényi DP at the expected answered count (an average, not a "
            "bound) |") in text
    assert ("*Cumulative privacy cost: data-dependent, unsanitised: not for publication.*"
            in text)
    assert ("*Which queries the noisy threshold lets through: drawn from the private votes' "
            "plurality counts: not for publication.*" in text)
    assert cli.report(VOTES, "-n", "300", "--accounting", "data-independent", "-o",
                      out).code == 0
    text = out.read_text(encoding="utf-8")
    assert ("*Cumulative privacy cost: the run's answers, a count the votes decide: not a "
            "bound (every query answered: ") in text and "plurality counts: not for" in text
    assert cli.report(VOTES, "-n", "300", "-m", "gnmax", "--accounting", "data-independent",
                      "-o", out).code == 0
    assert "*Cumulative privacy cost:" not in out.read_text(encoding="utf-8")


def test_a_delta_not_below_one_over_n_is_a_warning_line(cli, tmp_path):
    """--dataset-size N with delta >= 1/N: the report's checklist flags it, and stderr says
    so in one Warning: line (the report is still written, exit 0); none when it holds."""
    out = tmp_path / "r.md"
    ran = cli.report(VOTES, "-n", "50", "--dataset-size", "10000000", "-o", out)
    assert ran.code == 0 and out.exists()
    assert ran.err == ("Warning: delta 1e-05 is not below 1/N = 1e-07 for --dataset-size "
                       "10000000: such a delta allows releasing an example outright; choose "
                       "delta < 1/N\n")
    assert cli.report(VOTES, "-n", "50", "--dataset-size", "60000", "-o", out).err == ""


def test_an_individualized_runs_rebuilt_command_gives_its_numbers(cli, tmp_path):
    """A weighting run's summary records its rule (``individualized_rule``) and pate-report
    rebuilds the command with it and with the predictions as ``--predictions``: the command
    gives the same figures."""
    import shlex

    from pate_cli.outputs.report_command import command_line

    predictions = str(SAMPLES / "mnist_250_predictions.npy")
    args = ["--predictions", predictions, "--individualized", "weighting", "--groups",
            str(SAMPLES / "mnist_250_groups.csv"), "--teacher-groups",
            str(SAMPLES / "mnist_250_teacher_groups.csv"), "-n", "300"]
    summary = json.loads(cli.analyze(*args, "--weights", "budget", "-f", "json").out)
    assert summary["individualized_rule"] == {"weights": "budget"}
    rebuilt, _ = command_line(summary, None)
    words = shlex.split(rebuilt)
    assert words[words.index("--predictions") + 1] == predictions
    assert words[words.index("--weights") + 1] == "budget"
    again = json.loads(cli.analyze(*words[1:], "-f", "json").out)
    assert [row["epsilon"] for row in again["groups"]] == [
        row["epsilon"] for row in summary["groups"]]


def test_an_upsampling_run_with_teacher_groups_is_rebuilt_from_its_predictions(cli):
    """--teacher-groups needs --predictions: an upsampling run's summary that records its
    teacher groups is rebuilt with its input as --predictions (it was given as VOTES, which
    the rebuilt command refused), and the command gives the same figures."""
    import shlex

    from pate_cli.outputs.report_command import command_line

    predictions = str(SAMPLES / "mnist_250_predictions.npy")
    summary = json.loads(cli.analyze(
        "--predictions", predictions, "--individualized", "upsampling", "--groups",
        str(SAMPLES / "mnist_250_groups.csv"), "--teacher-groups",
        str(SAMPLES / "mnist_250_teacher_groups.csv"), "-m", "gnmax", "--sigma", "40",
        "-n", "300", "-f", "json").out)
    words = shlex.split(command_line(summary, None)[0])
    assert words[words.index("--predictions") + 1] == predictions
    again = cli.analyze(*words[1:], "-f", "json")
    assert again.code == 0, again.err
    assert [row["epsilon"] for row in json.loads(again.out)["groups"]] == [
        row["epsilon"] for row in summary["groups"]]


@pytest.mark.parametrize("accounting", ["replay", "data-independent"])
def test_the_tuning_section_labels_and_rounds_its_figures(cli, tmp_path, accounting):
    """The report's tuning section: the search's law and its epsilons, rounded up, each
    one from the run's data-dependent curve marked unsanitised; no JSON key nor risk
    record printed raw (its risk is the risk section's)."""
    out = tmp_path / "r.md"
    args = (VOTES, "-m", "gnmax", "-n", "100", "--tuning", "poisson:3", "--accounting",
            accounting)
    assert cli.report(*args, "-o", out).code == 0
    section = out.read_text().split("## Hyperparameter tuning", 1)[1].split("## Figures")[0]
    tuning = json.loads(cli.analyze(*args, "-f", "json").out)["tuning"]
    assert "random search, K ~ poisson:3" in section
    for raw in ("epsilon_single", "epsilon_tuned", "risk", "{", "shape"):
        assert raw not in section
    label = ("data-dependent, unsanitised: not for publication" if accounting == "replay"
             else "data-independent")
    assert f"| \u03b5 with the search ({label}) | {ceil_text(tuning['epsilon_tuned'])} " \
           in section
    assert f"| \u03b5 of one run ({label}) | {ceil_text(tuning['epsilon_single'])} |" in section


def test_a_tuned_run_says_which_attack_risk_includes_the_search(cli, tmp_path):
    """With --tuning the released risk is the search's (JSON tuning.risk): the summary
    prints it beside the single run's; the report does not present the single run's
    publishable bounds as data-dependent ones, and pate-plot's caption says its curve is one
    run's (the summary line above showed the single run's alone)."""
    from pate_cli.outputs.captions import risk_caption
    from pate_cli.outputs.risk_figure import with_published_risk

    args = (VOTES, "-m", "gnmax", "--sigma", "100", "-n", "300", "--tuning", "poisson:5")
    summary = json.loads(cli.analyze(*args, "-f", "json").out)
    tuned = summary["tuning"]["risk"]
    line = next(line for line in cli.analyze(*args).out.splitlines()
                if line.startswith("risk with tuning"))
    assert " / ".join(ceil_text(tpr) for tpr in tuned["tpr_at_fpr"].values()) in line
    assert f"advantage <= {ceil_text(tuned['advantage'])}" in line
    assert summary["risk"] == summary["risk_data_independent"]  # the votes' curve adds nothing
    out = tmp_path / "r.md"
    assert cli.report(*args, "-o", out).code == 0
    text = out.read_text()
    assert "The bounds include the parameter search" in text
    assert "hold for these votes only" not in text
    caption = risk_caption(["run"], [summary])
    assert "one run, without its --tuning search (with it: TPR <= " in caption
    # pate-report's figure draws the search's curve: its caption says so
    published = risk_caption(["run"], [with_published_risk(summary)], dependent=False)
    assert "the --tuning search included" in published and "one run" not in published


def test_workers_are_taken_and_change_no_number(cli, tmp_path):
    """docs/commands/pate-report.md said it takes every option of pate-analyze; it refused
    -w/--workers. The report with threads is the one without (but for its command line),
    and --from, which analyses nothing, refuses it as an analysis option."""
    texts = []
    for name, extra in (("one", ["-w", "1"]), ("two", ["--workers", "2"])):
        out = tmp_path / f"{name}.md"
        assert cli.report(SAMPLES / "mnist_250_votes.npy", "-n", "200", *extra,
                          "-o", out).code == 0
        texts.append(out.read_text(encoding="utf-8").replace(f"{name}_files", "FILES")
                     .replace(f"{name}.md", "R").replace(" ".join(extra), "W"))
    assert texts[0] == texts[1]
    summary = tmp_path / "s.json"
    assert cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", "100", "-f", "json", "-o",
                       summary).code == 0
    refused = cli.report("--from", summary, "-w", "2", "-o", tmp_path / "r.md")
    assert refused.code == 2 and "(given: -w/--workers;" in refused.err
