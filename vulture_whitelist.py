"""Names the dead-code check (vulture, `make lint`) cannot see used: called by a framework
(click's ParamType.convert and commands, IPython's _repr_html_, signal handlers' frame
arguments, numpy's flags, a Protocol's subscript), read by name (dataclass fields serialised
with asdict, the contract columns and reference functions the tests compare against). Not
imported by the package; a name added here needs its reason above."""
# ruff: noqa
baseline_epsilon  # unused variable (pate_cli/accounting/individualized/groups.py:83)
cumulative_order  # unused variable (pate_cli/accounting/individualized/groups.py:82)
gaussian_exact_epsilon  # unused function (pate_cli/accounting/pld.py:65)
POINTS  # unused variable (pate_cli/accounting/q_bound.py:76)
rdp_cumulative  # unused variable (pate_cli/accounting/smooth_sensitivity/release.py:64)
selection_data_independent  # unused variable (pate_cli/accounting/smooth_sensitivity/release.py:67)
answer_data_independent  # unused variable (pate_cli/accounting/smooth_sensitivity/release.py:68)
_.rdp_cumulative  # unused property (pate_cli/accounting/smooth_sensitivity/release.py:176)
_.__getitem__  # unused method (pate_cli/accounting/svt_tuning.py:48)
scale_from_target_epsilon  # unused variable (pate_cli/analysis/result.py:72)
cutoff_from_search  # unused variable (pate_cli/analysis/result.py:74)
cutoffs_tried  # unused variable (pate_cli/analysis/result.py:75)
first_row  # unused variable (pate_cli/analysis/result.py:85)
_._repr_html_  # unused method (pate_cli/analysis/result.py:268)
_.writeable  # unused attribute (pate_cli/curve_store.py:114)
signum  # unused variable (pate_cli/cli/errors.py:136)
_.convert  # unused method (pate_cli/cli/options.py:20)
_.convert  # unused method (pate_cli/cli/options.py:40)
_.convert  # unused method (pate_cli/cli/options.py:55)
_.convert  # unused method (pate_cli/cli/options.py:75)
_.convert  # unused method (pate_cli/cli/options.py:90)
_.convert  # unused method (pate_cli/cli/options.py:210)
_.convert  # unused method (pate_cli/cli/options.py:231)
tradeoff  # unused function (pate_cli/cli/plot.py:134)
tradeoff_curve  # unused function (pate_cli/cli/plot.py:229)
_.convert  # unused method (pate_cli/cli/plot_options.py:70)
_.convert  # unused method (pate_cli/cli/sweep.py:77)
dp_event_dict  # unused function (pate_cli/inputs/rdp_curve.py:139)
_.writeable  # unused attribute (pate_cli/mechanisms/noise.py:95)
signum  # unused variable (pate_cli/sweep/executors.py:92)
_.dense  # VoteRows.dense: the tests compare sparse rows with dense ones
COMMAND_ONLY  # unused variable (pate_cli/sweep/api.py:27): the tests hold pate-sweep's options to it
