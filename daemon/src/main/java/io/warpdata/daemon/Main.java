package io.warpdata.daemon;

/** Entry point of the shaded jar: {@code java -jar warp.jar warpd|warpctl ...}. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.err.println("usage: warp.jar warpd|warpctl ...");
        System.exit(2);
    }
}
