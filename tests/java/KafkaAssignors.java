import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Kafka's own client-side assignors (kafka-clients) on lagassign cases, for the fidelity tests.
 *
 * <p>Reads one case per line on stdin (members with topics, owned partitions, instance id and
 * rack; partitions with the racks of their replicas) and writes one JSON object per line: the
 * assignment of range, roundrobin, sticky and cooperative-sticky (its first rebalance, and
 * "cooperative-sticky-final" after rerunning until nothing is held back). Subscriptions are
 * built as a consumer builds them in a real rebalance: owned partitions in the Subscription,
 * the StickyAssignor's user data from its own onAssignment/subscriptionUserData, the rack in
 * the Subscription and the replicas' racks on the Cluster's nodes.
 */
public final class KafkaAssignors {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int GENERATION = 1;

    private KafkaAssignors() {}

    public static void main(String[] args) throws Exception {
        JsonLines.serve(KafkaAssignors::run);
    }

    private static final class Member {
        String id;
        List<String> topics = new ArrayList<>();
        List<TopicPartition> owned = new ArrayList<>();
        Optional<String> instanceId = Optional.empty();
        Optional<String> rack = Optional.empty();
    }

    static ObjectNode run(JsonNode gcase) {
        List<Member> members = new ArrayList<>();
        for (JsonNode m : gcase.get("members")) {
            Member member = new Member();
            member.id = m.get("id").asText();
            for (JsonNode t : m.get("topics")) member.topics.add(t.asText());
            JsonNode owned = m.get("owned");
            if (owned != null) for (JsonNode p : owned) member.owned.add(new TopicPartition(p.get(0).asText(), p.get(1).asInt()));
            member.instanceId = text(m.get("instance_id"));
            member.rack = text(m.get("rack"));
            members.add(member);
        }
        Cluster cluster = cluster(gcase.get("partitions"));
        ObjectNode result = JSON.createObjectNode();
        result.set("range", encode(assign(new RangeAssignor(), cluster, members, null)));
        result.set("roundrobin", encode(assign(new RoundRobinAssignor(), cluster, members, null)));
        Map<String, ByteBuffer> stickyData = new HashMap<>();
        for (Member m : members) {
            StickyAssignor own = new StickyAssignor();
            own.onAssignment(new Assignment(m.owned), new ConsumerGroupMetadata("g", GENERATION, m.id, m.instanceId));
            stickyData.put(m.id, own.subscriptionUserData(new HashSet<>(m.topics)));
        }
        // Eager: partitions are revoked before joining, so only the user data says what was owned.
        List<Member> eager = new ArrayList<>();
        for (Member m : members) {
            Member e = copy(m, List.of());
            eager.add(e);
        }
        result.set("sticky", encode(assign(new StickyAssignor(), cluster, eager, stickyData)));
        Map<String, List<TopicPartition>> first = null;
        Map<String, List<TopicPartition>> now = null;
        List<Member> round = members;
        for (int i = 0; i < 10; i++) {
            Map<String, ByteBuffer> coopData = new HashMap<>();
            for (Member m : round) {
                CooperativeStickyAssignor own = new CooperativeStickyAssignor();
                own.onAssignment(new Assignment(m.owned), new ConsumerGroupMetadata("g", GENERATION + i, m.id, m.instanceId));
                coopData.put(m.id, own.subscriptionUserData(new HashSet<>(m.topics)));
            }
            now = assign(new CooperativeStickyAssignor(), cluster, round, coopData);
            if (first == null) first = now;
            boolean same = true;
            List<Member> next = new ArrayList<>();
            for (Member m : round) {
                List<TopicPartition> got = now.get(m.id);
                if (!new HashSet<>(got).equals(new HashSet<>(m.owned))) same = false;
                next.add(copy(m, got));
            }
            if (same) break;
            round = next;
        }
        result.set("cooperative-sticky", encode(first));
        result.set("cooperative-sticky-final", encode(now));
        return result;
    }

    private static Member copy(Member m, List<TopicPartition> owned) {
        Member c = new Member();
        c.id = m.id;
        c.topics = m.topics;
        c.owned = new ArrayList<>(owned);
        c.instanceId = m.instanceId;
        c.rack = m.rack;
        return c;
    }

    private static Optional<String> text(JsonNode node) {
        return node == null || node.isNull() ? Optional.empty() : Optional.of(node.asText());
    }

    /** A cluster whose nodes carry the racks named by the partitions' replicas (one rackless node otherwise). */
    static Cluster cluster(JsonNode partitions) {
        Map<String, Node> byRack = new LinkedHashMap<>();
        Node rackless = new Node(0, "localhost", 9092);
        List<Node> nodes = new ArrayList<>(List.of(rackless));
        List<PartitionInfo> infos = new ArrayList<>();
        for (JsonNode p : partitions) {
            List<Node> replicas = new ArrayList<>();
            JsonNode racks = p.get("racks");
            if (racks != null && !racks.isNull()) {
                for (JsonNode r : racks) {
                    Node node = byRack.computeIfAbsent(r.asText(), name -> {
                        Node n = new Node(nodes.size(), "localhost", 9092 + nodes.size(), name);
                        nodes.add(n);
                        return n;
                    });
                    replicas.add(node);
                }
            }
            if (replicas.isEmpty()) replicas.add(rackless);
            Node[] arr = replicas.toArray(new Node[0]);
            infos.add(new PartitionInfo(p.get("topic").asText(), p.get("partition").asInt(), arr[0], arr, arr));
        }
        return new Cluster("lagassign", nodes, infos, Set.of(), Set.of());
    }

    static Map<String, List<TopicPartition>> assign(
            ConsumerPartitionAssignor assignor, Cluster cluster, List<Member> members, Map<String, ByteBuffer> userData) {
        Map<String, Subscription> subs = new HashMap<>();
        for (Member m : members) {
            ByteBuffer data = userData == null ? null : userData.get(m.id);
            Subscription s = new Subscription(m.topics, data, m.owned, GENERATION, m.rack);
            s.setGroupInstanceId(m.instanceId);
            subs.put(m.id, s);
        }
        Map<String, Assignment> got = assignor.assign(cluster, new GroupSubscription(subs)).groupAssignment();
        Map<String, List<TopicPartition>> result = new TreeMap<>();
        for (Member m : members) {
            Assignment a = got.get(m.id);
            result.put(m.id, a == null ? List.of() : a.partitions());
        }
        return result;
    }

    static ObjectNode encode(Map<String, List<TopicPartition>> assignment) {
        ObjectNode node = JSON.createObjectNode();
        for (Map.Entry<String, List<TopicPartition>> e : assignment.entrySet()) {
            ArrayNode list = node.putArray(e.getKey());
            List<TopicPartition> sorted = new ArrayList<>(e.getValue());
            sorted.sort((a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
            for (TopicPartition tp : sorted) list.addArray().add(tp.topic()).add(tp.partition());
        }
        return node;
    }
}
