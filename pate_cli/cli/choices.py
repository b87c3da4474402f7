"""The names ``-h`` lists as choices, kept here so that printing help imports no numerics;
each equals the core's tuple (tests/cli/test_fast_start.py checks it)."""

MECHANISMS = ("lnmax", "gnmax", "confident", "interactive", "svt", "exponential",
              "confident-exponential")  # mechanisms.MECHANISMS
AUDITED = ("lnmax", "gnmax", "confident", "exponential",
           "confident-exponential")  # accounting.audit.CLAIMED
VARIANTS = ("upsampling", "weighting", "vanishing")  # analysis.individualized.VARIANTS
CONVERSIONS = ("classic", "improved")  # accounting.conversion.CONVERSIONS
TABLE_FORMATS = ("csv", "json", "table")  # sweep.table.TABLE_FORMATS
Q_BOUNDS = ("union", "integral")  # accounting.q_bound.Q_BOUNDS
ORDERS_AUTO = "auto"  # orders.AUTO (--orders auto)
SCREENINGS = ("exact", "gaussian")  # mechanisms.threshold.SCREENINGS
ETA = (1e-12, 300.0)  # mechanisms.domains.ETA (the range --eta's help gives)
ETA_TEXT = f"eta in [{ETA[0]:g}, {ETA[1]:g}]"
MAX_POINTS = 100_000  # sweep.api.MAX_POINTS (pate-sweep --max-points' default)
CALIBRATED = ("gnmax", "lnmax", "confident", "exponential",
              "confident-exponential")  # sweep.calibrate.CALIBRATED
CALIBRATION_ACCOUNTINGS = ("data-independent", "expected")  # sweep.calibrate.ACCOUNTINGS
CALIBRATION_TOLERANCE = 1e-3  # sweep.calibrate.DEFAULT_TOLERANCE
