package io.idverify;

/** Anything this client throws: a transport failure (no answer) is this class itself; an API answer is {@link ApiException}. */
public class IdverifyException extends RuntimeException {
    public IdverifyException(String message) {
        super(message);
    }

    public IdverifyException(String message, Throwable cause) {
        super(message, cause);
    }
}
