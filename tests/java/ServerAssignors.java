import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

/**
 * Kafka's own server-side assignors of KIP-848 (kafka-group-coordinator: {@code UniformAssignor}
 * and {@code RangeAssignor}) on lagassign cases, for the fidelity tests.
 *
 * <p>Reads one case per line on stdin (members with topics, owned partitions as the current
 * target assignment, instance id and rack; partitions with the racks of their replicas) and
 * writes one JSON object per line: the assignment of each assignor, and the subscription type
 * the coordinator would pass ({@code ModernGroup.subscriptionType}: homogeneous when every
 * subscribed topic has every member as subscriber).
 *
 * <p>The coordinator's assignors walk members, topics and partitions in the iteration order of
 * its hash maps and sets, so each is run twice: {@code uniform} / {@code range} as the
 * coordinator builds its input ({@code TargetAssignmentBuilder}: members in a {@code HashMap}
 * by member id, topic ids random, here derived from the topic's name, current assignments as
 * {@code Assignment.fromRecord} holds them, in hash maps and sets), and
 * {@code uniform-ordered} / {@code range-ordered} with the same content in the order lagassign
 * walks it: members in Kafka's sort order (static members by {@code group.instance.id} first,
 * then member ids), topics by name (their ids chosen so that every hash set of them iterates
 * in that order; checked), partitions by number. Racks are passed where the API takes them
 * ({@code MemberSubscription.rackId}, {@code SubscribedTopicDescriber.racksForPartition}).
 */
public final class ServerAssignors {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ServerAssignors() {}

    public static void main(String[] args) throws Exception {
        JsonLines.serve(ServerAssignors::run);
    }

    private record Member(String id, List<String> topics, List<JsonNode> owned, Optional<String> instanceId, Optional<String> rack) {}

    /** Topic names and ids both ways, partition counts and replica racks. */
    private static final class Topics implements SubscribedTopicDescriber {
        final Map<String, Uuid> ids = new HashMap<>();
        final Map<Uuid, String> names = new HashMap<>();
        final Map<Uuid, Integer> counts = new HashMap<>();
        final Map<Uuid, Map<Integer, Set<String>>> racks = new HashMap<>();

        Topics(JsonNode partitions, boolean ordered) {
            TreeSet<String> sorted = new TreeSet<>();
            for (JsonNode p : partitions) sorted.add(p.get("topic").asText());
            int rank = 0;
            for (String name : sorted) {
                // Ordered: Uuid(0, rank + 2) hashes to rank + 2 (below any hash table's size
                // here), so hash sets iterate in name order. Else a name-based stand-in for the
                // broker's random ids (0 and 1 are reserved ids).
                Uuid id = ordered ? new Uuid(0L, rank + 2L) : nameId(name);
                rank++;
                ids.put(name, id);
                names.put(id, name);
            }
            for (JsonNode p : partitions) {
                Uuid id = ids.get(p.get("topic").asText());
                int partition = p.get("partition").asInt();
                counts.merge(id, partition + 1, Math::max);
                Set<String> replicaRacks = new HashSet<>();
                JsonNode r = p.get("racks");
                if (r != null && !r.isNull()) for (JsonNode rack : r) replicaRacks.add(rack.asText());
                racks.computeIfAbsent(id, k -> new HashMap<>()).put(partition, replicaRacks);
            }
        }

        static Uuid nameId(String name) {
            UUID u = UUID.nameUUIDFromBytes(("lagassign-topic:" + name).getBytes(StandardCharsets.UTF_8));
            return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits());
        }

        @Override
        public int numPartitions(Uuid topicId) {
            return counts.getOrDefault(topicId, -1);
        }

        @Override
        public Set<String> racksForPartition(Uuid topicId, int partition) {
            return racks.getOrDefault(topicId, Map.of()).getOrDefault(partition, Set.of());
        }
    }

    static ObjectNode run(JsonNode gcase) {
        List<Member> members = new ArrayList<>();
        for (JsonNode m : gcase.get("members")) {
            List<String> topics = new ArrayList<>();
            for (JsonNode t : m.get("topics")) topics.add(t.asText());
            List<JsonNode> owned = new ArrayList<>();
            JsonNode o = m.get("owned");
            if (o != null) for (JsonNode p : o) owned.add(p);
            members.add(new Member(m.get("id").asText(), topics, owned, text(m.get("instance_id")), text(m.get("rack"))));
        }
        ObjectNode result = JSON.createObjectNode();
        result.put("subscription_type", subscriptionType(members).name());
        for (boolean ordered : new boolean[] {false, true}) {
            Topics topics = new Topics(gcase.get("partitions"), ordered);
            String suffix = ordered ? "-ordered" : "";
            result.set("uniform" + suffix, assign(new UniformAssignor(), members, topics, ordered));
            result.set("range" + suffix, assign(new RangeAssignor(), members, topics, ordered));
        }
        return result;
    }

    private static Optional<String> text(JsonNode node) {
        return node == null || node.isNull() ? Optional.empty() : Optional.of(node.asText());
    }

    /** {@code ModernGroup.subscriptionType}: homogeneous when every subscribed topic has every member. */
    static SubscriptionType subscriptionType(List<Member> members) {
        Map<String, Integer> subscribers = new HashMap<>();
        for (Member m : members) for (String t : new HashSet<>(m.topics)) subscribers.merge(t, 1, Integer::sum);
        for (int n : subscribers.values()) if (n != members.size()) return SubscriptionType.HETEROGENEOUS;
        return SubscriptionType.HOMOGENEOUS;
    }

    /** Kafka's member sort (the server RangeAssignor's and the clients'): static by instance id first. */
    static List<Member> kafkaOrder(List<Member> members) {
        List<Member> sorted = new ArrayList<>(members);
        sorted.sort((a, b) -> {
            if (a.instanceId.isPresent() && b.instanceId.isPresent()) return a.instanceId.get().compareTo(b.instanceId.get());
            if (a.instanceId.isPresent()) return -1;
            if (b.instanceId.isPresent()) return 1;
            return a.id.compareTo(b.id);
        });
        return sorted;
    }

    static ObjectNode assign(ConsumerGroupPartitionAssignor assignor, List<Member> members, Topics topics, boolean ordered) {
        Map<String, MemberSubscriptionAndAssignmentImpl> specs = ordered ? new LinkedHashMap<>() : new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        for (Member m : ordered ? kafkaOrder(members) : members) {
            Set<Uuid> subscribed = ordered ? new TreeSet<>() : new HashSet<>();
            for (String t : m.topics) subscribed.add(topics.ids.get(t));
            if (ordered) checkOrder(subscribed, topics);
            Map<Uuid, Set<Integer>> current = ordered ? new TreeMap<>() : new HashMap<>();
            for (JsonNode p : m.owned) {
                Uuid id = topics.ids.get(p.get(0).asText());
                int partition = p.get(1).asInt();
                current.computeIfAbsent(id, k -> ordered ? new TreeSet<>() : new HashSet<>()).add(partition);
                inverted.computeIfAbsent(id, k -> new HashMap<>()).put(partition, m.id);
            }
            specs.put(m.id, new MemberSubscriptionAndAssignmentImpl(m.rack, m.instanceId, subscribed, new Assignment(current)));
        }
        GroupSpecImpl spec = new GroupSpecImpl(Collections.unmodifiableMap(specs), subscriptionType(members), inverted);
        GroupAssignment got = assignor.assign(spec, topics);
        ObjectNode node = JSON.createObjectNode();
        for (Member m : kafkaOrder(members)) {
            MemberAssignment a = got.members().get(m.id);
            List<Map.Entry<String, Integer>> tps = new ArrayList<>();
            if (a != null) {
                for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet()) {
                    for (int p : e.getValue()) tps.add(Map.entry(topics.names.get(e.getKey()), p));
                }
            }
            tps.sort(Map.Entry.<String, Integer>comparingByKey().thenComparing(Map.Entry.comparingByValue()));
            ArrayNode list = node.putArray(m.id);
            for (Map.Entry<String, Integer> tp : tps) list.addArray().add(tp.getKey()).add(tp.getValue());
        }
        return node;
    }

    /** The ordered ids do iterate in name order in a hash set (the assignors copy into HashSets). */
    static void checkOrder(Set<Uuid> ids, Topics topics) {
        String last = null;
        for (Uuid id : new HashSet<>(ids)) {
            String name = topics.names.get(id);
            if (last != null && last.compareTo(name) > 0) throw new IllegalStateException("topic ids out of name order: " + ids);
            last = name;
        }
    }
}
