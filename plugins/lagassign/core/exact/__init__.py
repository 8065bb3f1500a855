"""Exact solvers and bounds: where a plan is proved optimal, or bettered.

* ``lag_milp``: lag-optimal's exact model (HiGHS, the optional ``certify`` extra).
* ``drain_branch``: drain-optimal's branch and bound for small groups, and its heavy-partition
  bound.
* ``drain_milp``: drain-optimal's optional polish, bisection on the catch-up time (HiGHS).
* ``highs``: the HiGHS model from row-wise constraints and the quiet, seeded solver both MILPs use.
* ``drain_bounds``: drain-optimal's count rules and the largest catch-up time no plan under
  them beats.
"""
