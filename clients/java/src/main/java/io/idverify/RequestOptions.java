package io.idverify;

import java.util.LinkedHashMap;
import java.util.Map;

/** What {@link BaseClient#request} sends beside the method and path. */
public final class RequestOptions {
    final Map<String, Object> query = new LinkedHashMap<>();
    final Map<String, String> headers = new LinkedHashMap<>();
    Object json;
    Map<String, ?> form;
    byte[] body;
    String contentType;
    String accept = "application/json";
    boolean auth = true;
    boolean root;
    String operation;

    public static RequestOptions create() {
        return new RequestOptions();
    }

    /** Query parameters; null values are left out. */
    public RequestOptions query(Map<String, ?> values) {
        if (values != null) values.forEach((k, v) -> { if (v != null) query.put(k, v); });
        return this;
    }

    public RequestOptions query(String name, Object value) {
        if (value != null) query.put(name, value);
        return this;
    }

    /** A header; a null value is left out. */
    public RequestOptions header(String name, String value) {
        if (value != null) headers.put(name.toLowerCase(java.util.Locale.ROOT), value);
        return this;
    }

    /** A JSON body: a Map, a record, a JsonNode, anything Jackson writes. */
    public RequestOptions json(Object value) {
        this.json = value;
        return this;
    }

    /** A form-encoded body. */
    public RequestOptions form(Map<String, ?> fields) {
        this.form = fields;
        return this;
    }

    /** A raw body of the given type (a CSV upload). */
    public RequestOptions body(byte[] bytes, String type) {
        this.body = bytes;
        this.contentType = type;
        return this;
    }

    public RequestOptions accept(String type) {
        this.accept = type;
        return this;
    }

    /** Whether to send the bearer token (default true). */
    public RequestOptions auth(boolean on) {
        this.auth = on;
        return this;
    }

    /** The path is at the service root (healthz, readyz), not under /v1. */
    public RequestOptions root(boolean on) {
        this.root = on;
        return this;
    }

    /** The operationId named in errors. */
    public RequestOptions operation(String id) {
        this.operation = id;
        return this;
    }
}
