package io.warpdata.manifest;

/**
 * Root of Warp's typed errors. Every Warp error says what went wrong and what to do next;
 * the two are kept apart so that the CLI can print them on separate lines and the control
 * socket can send them as separate fields.
 */
public abstract class WarpException extends RuntimeException {
    private final String nextStep;

    protected WarpException(String message, String nextStep) {
        this(message, nextStep, null);
    }

    protected WarpException(String message, String nextStep, Throwable cause) {
        super(message, cause);
        this.nextStep = nextStep;
    }

    /** A short, stable name for the error type, e.g. {@code ManifestCorrupted}. */
    public abstract String type();

    /** What the user should do next; never empty. */
    public String nextStep() {
        return nextStep;
    }

    /**
     * Facts a script needs without parsing the message (a lost publish's {@code version}): sent
     * beside {@code type}, {@code message} and {@code next_step} in the error's JSON. Empty by default.
     */
    public java.util.Map<String, String> details() {
        return java.util.Map.of();
    }
}
