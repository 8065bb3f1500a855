"""Default names of the two topics lagassign owns on a cluster (both compacted)."""

#: Published plans: key = group id, value = the plan (``kafka.plans``).
PLAN_TOPIC = "lagassign.plans"
#: Instances' status records: key = [group, instance], value = ``liveness.InstanceStatus``.
STATUS_TOPIC = "lagassign.status"
