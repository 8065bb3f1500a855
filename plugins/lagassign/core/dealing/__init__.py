"""How partitions are dealt to members and counts balanced, shared by several strategies.

* ``loadbook``: the least-loaded member per subscription, and count balancing.
* ``rounds``: lag's and lag-aware's passes dealt in rounds (where every topic has one class of
  subscribers).
* ``fewer_moves``: sticky's search for chains of hand-overs that balance counts with few
  moves, on ``holdings`` (who holds what, in recency order), ``handovers`` (each hand-over's
  cost and partitions) and ``chains`` (shortest chains between members).
"""
