package io.idverify;

/** Options of a verification call: an Idempotency-Key (a retry is then safe), and {@code Prefer: respond-async}. */
public final class VerifyOptions {
    String idempotencyKey;
    boolean respondAsync;

    public static VerifyOptions create() {
        return new VerifyOptions();
    }

    public VerifyOptions idempotencyKey(String key) {
        this.idempotencyKey = key;
        return this;
    }

    /** Answer 202 {@code {"status": "pending", "reference_id"}} at once; requery until it ends. */
    public VerifyOptions respondAsync(boolean on) {
        this.respondAsync = on;
        return this;
    }
}
