import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.idverify.ApiException;
import io.idverify.IdverifyClient;
import io.idverify.VerifyOptions;
import io.idverify.Webhooks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The five-minute walk (the README's, as a program): sign in, read the balance, verify the fixture NIN,
 * verify a live NIN without waiting and requery it until it ends, then check the webhook deliveries named in
 * IDVERIFY_WEBHOOK_FILES. One JSON object per line. A delivery's timestamp must be within
 * IDVERIFY_WEBHOOK_TOLERANCE seconds of the clock (unset: 300, the verifier's replay window; 0: no
 * timestamp check, for deliveries saved earlier and verified now).
 */
public final class Walk {
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        String base = System.getenv().getOrDefault("IDVERIFY_BASE_URL", "http://localhost:8080/v1");
        IdverifyClient client = new IdverifyClient(base);
        client.login(System.getenv("IDVERIFY_USERNAME"), System.getenv("IDVERIFY_PASSWORD"));

        JsonNode me = client.getMe();
        JsonNode units = me.path("organisation").path("units");
        System.out.println("{\"step\":\"me\",\"units\":" + (units.isMissingNode() ? "null" : units.toString()) + "}");

        // A fixture NIN: a full sample record, no upstream call, 0 units.
        client.verifyNin(Map.of("nin", "12345678901", "reason", "corporate"), VerifyOptions.create().idempotencyKey(UUID.randomUUID().toString()));
        // The answer as the API sent it (a JSON text on one line), not re-encoded.
        System.out.println("{\"step\":\"verify_nin\",\"answer\":" + client.lastResponse().text().trim() + "}");

        // A live NIN, without waiting: 202 pending at once, then requery until it is no longer pending.
        JsonNode accepted = client.verifyNin(Map.of("nin", "23456789012", "reason", "corporate"),
            VerifyOptions.create().idempotencyKey(UUID.randomUUID().toString()).respondAsync(true));
        try {
            client.requeryUntilDone(accepted.get("reference_id").asText(), Duration.ofMillis(250), Duration.ofMinutes(2));
        } catch (ApiException ended) {
            // It ended with an error (e.g. 404 NIN not found): that is its answer too.
        }
        System.out.println("{\"step\":\"requery\",\"answer\":" + client.lastResponse().text().trim() + "}");

        String window = System.getenv().getOrDefault("IDVERIFY_WEBHOOK_TOLERANCE", "");
        long seconds = window.isBlank() ? 300 : Long.parseLong(window.trim());
        long tolerance = seconds > 0 ? seconds : Long.MAX_VALUE; // 0: a window wider than any clock, so no timestamp check
        String files = System.getenv().getOrDefault("IDVERIFY_WEBHOOK_FILES", "");
        for (String file : files.split(",")) {
            if (file.isBlank()) continue;
            JsonNode delivery = mapper.readTree(Files.readString(Path.of(file.trim())));
            Map<String, String> headers = new HashMap<>();
            delivery.path("headers").fields().forEachRemaining(e -> headers.put(e.getKey(), e.getValue().asText()));
            boolean valid = Webhooks.verify(delivery.path("secret").asText(), headers, delivery.path("body").asText(), tolerance, null);
            System.out.println("{\"step\":\"webhook\",\"valid\":" + valid + "}");
        }
    }
}
