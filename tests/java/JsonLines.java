import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * The harness programs' protocol with {@code tests/support/kafka_java.py}: one lagassign case
 * per line on stdin (blank lines skipped), one JSON object per line on stdout, the case's
 * result, in the cases' order.
 */
final class JsonLines {
    private static final ObjectMapper JSON = new ObjectMapper();

    private JsonLines() {}

    /** Answer every case line with {@code run}'s result for it, until stdin ends. */
    static void serve(Function<JsonNode, ? extends JsonNode> run) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            out.println(JSON.writeValueAsString(run.apply(JSON.readTree(line))));
        }
    }
}
