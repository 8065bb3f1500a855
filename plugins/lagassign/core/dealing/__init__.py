"""How partitions are dealt to members and counts balanced, shared by several strategies.

* ``loadbook``: the least-loaded member per subscription, and count balancing.
* ``rounds``: lag's and lag-aware's passes dealt in rounds (with numpy where every topic has
  one class of subscribers).
* ``fewer_moves``: sticky's hand-over chains, balancing counts with few moves.
"""
