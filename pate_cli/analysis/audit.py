"""ORCHESTRATE an audit: draws of an aggregator on a neighbouring pair -> a measured lower
bound on one query's epsilon beside the claimed upper bound (math:audit, cli:pate-audit).

The aggregator is ``pate-analyze``'s replay on an ``(n, K)`` array of identical rows (noise
keyed by row position: same draws for any chunk size), or a user's ``f(votes, rng) -> labels``
on blocks of ``USER_BLOCK`` rows, block ``b`` of side ``s`` drawn with generator
``(seed, (AUDIT_SALT + s, 0, b))``. A trial is ``queries`` consecutive rows; each side's first
``draws // 2`` trials choose the event (``accounting.audit.choose_event``), the rest measure it.
Size: one concept, an audit end to end (spec, pair, draws, margin pilot, claim, measurement).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..accounting.audit import (
    CLAIMED,
    Event,
    Measurement,
    choose_event,
    claimed_epsilon,
    measure,
)
from ..accounting.conversion import rdp_to_epsilon
from ..errors import InputError, PateWarning
from ..inputs.aggregator import UserAggregator, load_aggregator
from ..inputs.votes import VoteSet, load_votes, validated, votes_from_array
from ..mechanisms.aggregators import TAKEN_BY, build_mechanism, flag_of, not_taken
from ..mechanisms.noise import NoiseSource, generator
from ..mechanisms.protocol import Mechanism
from ..numerics import whole
from ..orders import default_orders
from ..vote_rows import is_sparse
from ..work_sizes import chunk_rows
from .steps import mechanism_steps

# Rows per call of a user's aggregator (each its own generator; at most USER_VALUES counts);
# the salt keeping the audit's noise apart from any run's.
USER_BLOCK = 65_536
USER_VALUES = 1 << 24
AUDIT_SALT = 1 << 20
# A trial's composed queries times its outcomes (classes + 1): its rows and the tallies.
TRIAL_VALUES = 1 << 20
# Noisy values drawn past which an audit warns that it will take long (minutes).
LONG_AUDIT_VALUES = 10**10
# --margin auto: the leads a pilot tries, and its draws per side (a tenth, at least 2,000).
MARGINS = (1, 2, 4, 8, 16, 32, 64, 128)
PILOT_SHARE, PILOT_LEAST = 10, 2_000
PARAMETERS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "eta")


@dataclass(frozen=True)
class AuditSpec:
    """What to audit and how (cli:pate-audit).

    ``mechanism`` names the claim (``gnmax``, ``confident``, ``lnmax``, ``exponential``,
    ``confident-exponential``),
    ``parameters`` its noise (unset ones default from the number of teachers as in
    pate-analyze); ``draws`` per side; ``confidence`` of the lower bound; ``delta`` of both
    bounds; ``seed`` of the draws; ``margin`` the plurality's lead in the data-independent
    pair (1: a near tie; ``"auto"``: the lead a pilot on other draws measures most at,
    :func:`audit_spec`); ``query`` a row of the votes whose data-dependent claim is audited
    instead; ``queries`` the identical queries composed in each trial (their outputs drawn
    independently, the claim composed over them); ``chunk_rows`` rows per call of the
    built-in replay (any value, same result)."""

    mechanism: str = "gnmax"
    parameters: dict = field(default_factory=dict)
    draws: int = 1_000_000
    confidence: float = 0.95
    delta: float = 1e-5
    seed: int = 0
    margin: int | str = 1
    query: int | None = None
    queries: int = 1
    chunk_rows: int | None = None

    def __post_init__(self):
        if self.mechanism not in CLAIMED:
            raise InputError(f"pate-audit audits {', '.join(CLAIMED)}; got {self.mechanism!r}")
        unknown = set(self.parameters) - set(PARAMETERS)
        if unknown:
            raise InputError(f"unknown parameter(s) {', '.join(sorted(unknown))} (expected "
                             f"{', '.join(PARAMETERS)})")
        for name, value in self.parameters.items():  # refused as pate-analyze refuses them
            if value is not None and not_taken(name, self.mechanism):  # as pate-analyze
                takers = [each for each in TAKEN_BY.get(name, ()) if each in CLAIMED]
                raise InputError(f"{flag_of(name)} applies to -m {', '.join(takers)}, not "
                                 f"-m {self.mechanism}")
        for value, name, least in ((self.draws, "draws", 2), (self.seed, "seed", 0), (
                None if self.margin == "auto" else self.margin, "margin", 1), (self.queries,
                "queries", 1), (self.query, "query", 0), (self.chunk_rows, "chunk_rows", 1)):
            if value is not None:
                _check_int(value, name, least)
        if self.query is not None and self.margin != 1:  # 1: the default
            raise InputError(f"--margin {self.margin} sets the data-independent pair; --query "
                             "audits a row's own histogram")
        for name, value in (("confidence", self.confidence), ("delta", self.delta)):
            if not (isinstance(value, (int, float)) and 0.0 < value < 1.0):
                raise InputError(f"{name} must lie in (0, 1), got {value!r}")


def _check_int(value, name: str, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise InputError(f"{name} must be an integer >= {least}, got {value!r}")


@dataclass(frozen=True)
class AuditPair:
    """The neighbouring histograms (one teacher's vote differs) and why they were chosen."""

    first: np.ndarray
    second: np.ndarray
    kind: str  # "data-independent" or "data-dependent"
    description: str
    # --margin auto: {"pilot_draws", "lower": {lead: the pilot's epsilon_lower}, "chosen"}
    margin_search: dict | None = None


@dataclass(frozen=True)
class AuditResult:
    """An audit's outcome: the measured ``epsilon_lower`` (a measurement at ``confidence``,
    never a guarantee) beside the claimed ``epsilon_upper``, and how they were obtained."""

    spec: AuditSpec
    mechanism: Mechanism  # the claimed mechanism (its ``name`` and ``params``)
    votes: VoteSet
    audited: str  # "pate_cli" or the user's FILE.py:FUNCTION
    aggregator_sha256: str | None
    pair: AuditPair
    event: Event
    measurement: Measurement
    counts: np.ndarray  # (side, half, outcome, c): trials with c outputs equal to outcome
    epsilon_upper: float
    accountant: str

    @property
    def epsilon_lower(self) -> float:
        return self.measurement.epsilon_lower

    @property
    def verdict(self) -> str:
        return "violated" if self.epsilon_lower > self.epsilon_upper else "consistent"


def audit(votes, mechanism: str = "gnmax", *, aggregator=None, **options) -> AuditResult:
    """Audit one query (or ``queries`` composed ones) of ``mechanism``: a measured lower bound
    on its epsilon beside the claimed upper bound (math:audit).

    Args:
      votes: a vote file's path or a ``(queries, classes)`` array: its classes and teachers
        shape the data-independent pair; with ``query=I`` its row ``I`` is the pair's first
        histogram.
      mechanism: the claim: ``gnmax``, ``confident``, ``lnmax``, ``exponential`` or
        ``confident-exponential``.
      aggregator: None (pate_cli's replay of ``mechanism``), a function
        ``f(votes, rng) -> labels``, or ``"FILE.py:FUNCTION"``.
      **options: :class:`AuditSpec`'s fields (``draws``, ``confidence``, ``delta``, ``seed``,
        ``margin``, ``query``, ``queries``, ``chunk_rows``), the mechanism's parameters
        (``sigma``, ``threshold``, ``sigma_threshold``, ``laplace_scale``, ``eta``), and for
        a long ``query,class,count`` table at a path, ``classes`` (its vocabulary size)
        and ``columns`` (its column names), as :func:`load_votes` takes them.

    Returns:
      The :class:`AuditResult`.

    Raises:
      InputError: bad votes, options or aggregator (one line), or an aggregator that
        raises or returns anything but an ``(n,)`` integer array of labels in ``-1..K-1``.
    """
    parameters = {key: options.pop(key) for key in PARAMETERS
                  if options.get(key) is not None}
    for key in PARAMETERS:
        options.pop(key, None)
    long_table = {key: options.pop(key, None) for key in ("classes", "columns")}
    if any(value is not None for value in long_table.values()):
        if isinstance(votes, (VoteSet, np.ndarray)):
            raise InputError("classes and columns describe a long table file; these votes "
                             "are already read")
        votes = load_votes(votes, **long_table)
    spec = AuditSpec(mechanism=str(mechanism).lower(), parameters=parameters, **options)
    return audit_spec(votes, spec, aggregator=aggregator)


def audit_spec(votes, spec: AuditSpec, *, aggregator=None) -> AuditResult:
    """:func:`audit` of a ready :class:`AuditSpec`.

    ``margin="auto"``: a pilot audits each lead of ``MARGINS`` (up to the teachers) with a tenth
    of the draws (at least 2,000), seeds ``seed + 1 + i``; the audit runs at the lead measured
    most (smallest among ties), chosen without its own draws, so its confidence holds
    (math:audit)."""
    vote_set = validated(votes) if isinstance(votes, VoteSet) else (
        load_votes(votes) if isinstance(votes, (str, bytes, os.PathLike))
        else votes_from_array(votes))  # an array, a list of rows, a DataFrame
    user = _user_aggregator(aggregator)
    if spec.margin == "auto":
        return _margin_search(vote_set, spec, user)
    teachers = float(vote_set.teachers)
    mechanism = build_mechanism(spec.mechanism, teachers=teachers, **spec.parameters)
    pair = _pair(vote_set, spec)
    if spec.query is None:
        upper, accountant = claimed_epsilon(mechanism.name, mechanism.params, delta=spec.delta,
                                            queries=spec.queries)
    else:
        upper, accountant = data_dependent_claim(mechanism, pair.first, delta=spec.delta,
                                                 queries=spec.queries)
    classes = vote_set.classes
    counts = np.stack([_side_counts(side, histogram, spec, mechanism, user, classes)
                       for side, histogram in enumerate((pair.first, pair.second))])
    half = spec.draws // 2
    both = spec.query is None  # a data-dependent claim bounds one direction only
    event = choose_event(counts[0, 0], counts[1, 0], trials=half, delta=spec.delta,
                         confidence=spec.confidence, both=both)
    measured = measure(event, counts[0, 1], counts[1, 1], trials=spec.draws - half,
                       delta=spec.delta, confidence=spec.confidence)
    return AuditResult(spec, mechanism, vote_set, "pate_cli" if user is None else user.name,
                       None if user is None else user.sha256, pair, event, measured, counts,
                       float(upper), accountant)


def data_dependent_claim(mechanism: Mechanism, histogram: np.ndarray, *, delta: float,
                         queries: int = 1) -> tuple[float, str]:
    """``(epsilon, accountant)`` claimed for ``queries`` queries at ``histogram``: ``queries``
    times ``pate-analyze``'s curve (``steps.mechanism_steps``: math:gnmax, math:threshold
    capped by math:screening, math:lnmax, math:exponential; a selecting mechanism's answer step
    in full), improved conversion over the default orders (math:conversion), or the
    data-independent claim where smaller. One direction only: ``P(S) <= e^epsilon P'(S) +
    delta``, ``P`` at ``histogram``, ``P'`` any neighbour (math:audit)."""
    orders = default_orders()
    votes = np.asarray(histogram, dtype=np.float64)[None, :]
    independent, _ = claimed_epsilon(mechanism.name, mechanism.params, delta=delta,
                                     queries=queries)
    rdp = np.zeros(orders.size)
    for step in mechanism_steps(mechanism):
        if step is not None:
            rdp = rdp + step.rdp(step.statistic(votes, None), orders)[0]
    dependent = float(rdp_to_epsilon(queries * rdp, orders=orders, delta=delta,
                                     conversion="improved")[0])
    if dependent < independent:
        return dependent, ("data-dependent RDP, improved conversion; unsanitised: not for "
                           "publication")
    return independent, "the data-independent claim (smaller than the data-dependent one)"


def _margin_search(vote_set: VoteSet, spec: AuditSpec,
                   user: UserAggregator | None) -> AuditResult:
    """``spec`` audited at the lead its pilot measures most (:func:`audit_spec`)."""
    teachers = float(vote_set.teachers)
    draws = max(PILOT_LEAST, spec.draws // PILOT_SHARE)
    lower = {}
    for index, margin in enumerate(m for m in MARGINS if m <= teachers):
        pilot = replace(spec, margin=margin, draws=draws, seed=spec.seed + 1 + index)
        lower[margin] = audit_spec(vote_set, pilot, aggregator=user).epsilon_lower
    chosen = max(lower, key=lambda margin: (lower[margin], -margin))
    result = audit_spec(vote_set, replace(spec, margin=chosen), aggregator=user)
    search = {"pilot_draws": draws, "lower": lower, "chosen": chosen}
    pair = replace(result.pair, margin_search=search,
                   description=f"{result.pair.description} (the lead chosen by a pilot of "
                               f"{draws:,} draws per side at each of {len(lower)} leads)")
    return replace(result, spec=spec, pair=pair)


def _user_aggregator(aggregator) -> UserAggregator | None:
    if aggregator is None or isinstance(aggregator, UserAggregator):
        return aggregator
    if isinstance(aggregator, str):
        return load_aggregator(aggregator)
    if callable(aggregator):
        name = getattr(aggregator, "__qualname__", None) or repr(aggregator)
        return UserAggregator(aggregator, name, None)
    raise InputError(f"aggregator must be a function or 'FILE.py:FUNCTION', got "
                     f"{type(aggregator).__name__}")


def _pair(vote_set: VoteSet, spec: AuditSpec) -> AuditPair:
    """The data-independent pair (math:audit), or row ``query`` and its worst neighbour."""
    classes = vote_set.classes
    if classes > 10**7:  # every draw is a noisy count per class
        raise InputError(f"pate-audit draws noise for every class: at most 10,000,000 "
                         f"classes, got {classes:,}")
    if spec.queries * (classes + 1) > TRIAL_VALUES:
        raise InputError(f"--compose {spec.queries:,}: at most {TRIAL_VALUES // (classes + 1):,}"
                         f" queries of {classes + 1:,} outcomes (classes and no answer): a "
                         f"trial's queries times its outcomes may be at most {TRIAL_VALUES:,}")
    drawn = 2 * spec.draws * spec.queries * (classes + 1)
    if drawn > LONG_AUDIT_VALUES:  # allowed, and said: an hour's work is not a typo's
        warnings.warn(PateWarning(
            f"--draws {spec.draws:,} x --compose {spec.queries:,} over {classes + 1:,} "
            f"outcomes draws {drawn:.1e} noisy values: expect a long run (about 10^8 a "
            "second a core)"), stacklevel=3)
    if spec.query is not None:
        if spec.query >= vote_set.queries:
            raise InputError(f"--query {spec.query}: the votes have {vote_set.queries} rows "
                             f"(0 to {vote_set.queries - 1})")
        if is_sparse(vote_set.votes):
            raise InputError(f"--query {spec.query}: needs dense votes (a (queries, classes) "
                             "array), not a sparse file")
        first = np.asarray(vote_set.votes[spec.query])
        if not (whole(first) and first.min() >= 0
                and first.sum(dtype=np.float64) <= 2**53):
            raise InputError(f"--query {spec.query}: the row is not whole vote counts (at "
                             "most 2^53 in all)")
        first = first.astype(np.int64)
        top = int(np.argmax(first))
        if first[top] < 1:
            raise InputError(f"--query {spec.query}: the row has no votes")
        runner = int(np.argmax(np.where(np.arange(classes) == top, -1, first)))
        second = first.copy()
        second[top] -= 1
        second[runner] += 1
        return AuditPair(first, second, "data-dependent",
                         f"query {spec.query} (the votes' own row: private, not for "
                         f"publication); one vote moves from class {top} to {runner}")
    teachers, margin = float(vote_set.teachers), int(spec.margin)  # "auto": audit_spec's
    if not (teachers.is_integer() and margin <= teachers <= 2**53):
        where = f"{vote_set.path}: " if vote_set.path else ""
        raise InputError(f"{where}the votes' rows sum to {teachers!r}: the pair needs a whole "
                         f"number of teachers, at least the margin {margin} and at most 2^53")
    total = int(teachers)
    low, rest = divmod(total - margin, 2)
    first = np.zeros(classes, dtype=np.int64)
    if rest and classes < 3:  # two classes: the lead takes the odd vote
        first[:2] = (low + margin + 1, low)
        rest = 0
    else:
        first[:3 if classes > 2 else 2] = (low + margin, low, rest)[:min(classes, 3)]
    second = first.copy()
    second[0] -= 1
    second[1] += 1
    lead = int(first[0] - first[1])
    what = "a near tie" if lead == 1 else f"a lead of {lead}"
    return AuditPair(first, second, "data-independent",
                     f"{what}; one vote moves from class 0 to 1")


def _side_counts(side: int, histogram: np.ndarray, spec: AuditSpec, mechanism: Mechanism,
                 user: UserAggregator | None, classes: int) -> np.ndarray:
    """``(half, outcome, c)`` tallies of ``spec.draws`` trials at ``histogram``."""
    if user is None:
        source = NoiseSource(spec.seed, salt=AUDIT_SALT + side)

        def draw(rows: np.ndarray, start: int, call: int) -> np.ndarray:
            return mechanism.replay(rows, noise=source, start=start).label

        step = chunk_rows(spec.chunk_rows, classes)
    else:
        def draw(rows: np.ndarray, start: int, call: int) -> np.ndarray:
            rng = generator(spec.seed, (AUDIT_SALT + side, 0, call))
            return _called(user, rows, rng, classes)

        step = max(1, min(USER_BLOCK, USER_VALUES // classes))
    return _tallies(draw, histogram, spec=spec, trials_per_call=max(1, step // spec.queries),
                    classes=classes)


def _tallies(draw: Callable[[np.ndarray, int, int], np.ndarray], histogram: np.ndarray, *,
             spec: AuditSpec, trials_per_call: int, classes: int) -> np.ndarray:
    """Tallies of the first ``draws // 2`` trials and the rest, ``trials_per_call`` per
    ``draw(rows, start, call)`` (``start``: the first row's position)."""
    draws, queries, outcomes = spec.draws, spec.queries, classes + 1
    half = draws // 2
    tallies = np.zeros((2, outcomes, queries + 1), dtype=np.int64)
    for call, first in enumerate(range(0, draws, trials_per_call)):
        trials = min(trials_per_call, draws - first)
        rows = np.repeat(histogram[None, :], trials * queries, axis=0)
        labels = np.asarray(draw(rows, first * queries, call)).reshape(trials, queries)
        # per trial, how many of its outputs equal each outcome
        keys = np.arange(trials)[:, None] * outcomes + labels + 1
        per_trial = np.bincount(keys.ravel(), minlength=trials * outcomes)
        per_trial = per_trial.reshape(trials, outcomes)
        cut = min(max(half - first, 0), trials)
        for part, rows_of in ((0, per_trial[:cut]), (1, per_trial[cut:])):
            cells = np.arange(outcomes)[None, :] * (queries + 1) + rows_of
            tallies[part] += np.bincount(cells.ravel(), minlength=outcomes * (queries + 1)
                                         ).reshape(outcomes, queries + 1)
    return tallies


def _called(user: UserAggregator, rows: np.ndarray, rng, classes: int) -> np.ndarray:
    """The user's labels for ``rows``, checked: an ``(n,)`` integer array in ``-1..K-1``."""
    count = rows.shape[0]
    try:
        labels = user.function(rows, rng)
    except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: its failure
        message = " ".join(str(error).split())
        raise InputError(f"the aggregator {user.name} raised {type(error).__name__}"
                         + (f": {message}" if message else "")) from None
    if not isinstance(labels, np.ndarray):
        raise InputError(f"the aggregator {user.name} returned {type(labels).__name__}, not a "
                         f"numpy array of {count} labels")
    if labels.shape != (count,):
        raise InputError(f"the aggregator {user.name} returned shape {labels.shape} for "
                         f"votes of shape {rows.shape}; expected ({count},), one label a row")
    if not np.issubdtype(labels.dtype, np.integer):
        raise InputError(f"the aggregator {user.name} returned {labels.dtype} labels; "
                         "expected integers (-1 for no answer)")
    if count and (int(labels.min()) < -1 or int(labels.max()) >= classes):
        raise InputError(f"the aggregator {user.name} returned labels in "
                         f"[{int(labels.min())}, {int(labels.max())}]; expected -1 (no "
                         f"answer) to {classes - 1}")
    return labels.astype(np.int64, copy=False)

