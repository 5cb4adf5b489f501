package io.warpdata.daemon;

import io.warpdata.daemon.cli.WarpctlCommand;
import io.warpdata.daemon.warpd.WarpdCommand;

import java.util.Arrays;

/**
 * Entry point of the shaded jar: {@code java -jar warp.jar warpd ...} runs the daemon,
 * {@code java -jar warp.jar warpctl ...} the client. The launchers in scripts/ do this.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        String[] rest = args.length == 0 ? args : Arrays.copyOfRange(args, 1, args.length);
        String program = args.length == 0 ? "" : args[0];
        switch (program) {
            case "warpd" -> {
                // warpd's log lines carry their time (ISO 8601, local offset): under a supervisor
                // other than journald nothing else dates them. Set before any logger exists; a
                // -Dorg.slf4j.simpleLogger... given to the JVM (WARP_JAVA_OPTS) wins.
                System.setProperty("org.slf4j.simpleLogger.showDateTime",
                        System.getProperty("org.slf4j.simpleLogger.showDateTime", "true"));
                System.setProperty("org.slf4j.simpleLogger.dateTimeFormat",
                        System.getProperty("org.slf4j.simpleLogger.dateTimeFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"));
                System.exit(WarpdCommand.run(rest));
            }
            case "warpctl" -> System.exit(WarpctlCommand.run(rest));
            default -> {
                System.err.println("usage: java -jar warp.jar warpd|warpctl [options]");
                System.exit(2);
            }
        }
    }
}
