package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.Call;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.RefreshCall;
import io.warpdata.daemon.control.protocol.Wire;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ProcessIdentity;
import io.warpdata.daemon.control.SocketPaths;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;

/**
 * What the commands that talk to warpd share, from the one options model of the warpctl root
 * ({@link WarpctlCommand}): the socket ({@code --socket}, before or after the command, else
 * {@code $WARP_SOCKET}, else the default for this user) and {@code --json} output.
 */
final class DaemonCalls {
    private DaemonCalls() {
    }

    /** The warpctl root a (sub)command runs under. */
    static WarpctlCommand root(CommandSpec spec) {
        return (WarpctlCommand) spec.root().userObject();
    }

    /** The control socket this run talks to. */
    static Path socket(CommandSpec spec) {
        WarpctlCommand root = root(spec);
        return root.socket != null ? root.socket : SocketPaths.clientSocket(root.context.env(), ProcessIdentity.uid());
    }

    /** Connects to the daemon (typed DaemonUnavailable error if none answers). */
    static ControlClient connect(CommandSpec spec) {
        return ControlClient.connect(socket(spec));
    }

    /**
     * How long warpd may stay silent answering a quick call (status, stats, metrics, cache stats):
     * a stopped or wedged warpd takes the connection and never answers.
     */
    static final Duration QUICK_ANSWER = Duration.ofSeconds(15);

    /** The calls that answer at once from warpd's memory: {@link #QUICK_ANSWER} bounds them. */
    private static final java.util.Set<String> QUICK = java.util.Set.of(Calls.STATUS.op(), Calls.STATS.op(),
            Calls.METRICS.op(), Calls.CACHE_STATS.op());

    /** Sends one call to warpd and waits for its reply (at most {@link #QUICK_ANSWER} of silence for a quick one). */
    static <Q, R, E> R call(CommandSpec spec, Call<Q, R, E> call, Q request) {
        try (ControlClient c = connect(spec)) {
            if (QUICK.contains(call.op())) {
                c.answering(QUICK_ANSWER);
            }
            return c.call(call, request);
        }
    }

    /** Prints {@code reply} as JSON under {@code --json}, else {@code text} as it is; returns 0, the exit code. */
    static int print(CommandSpec spec, Object reply, String text) {
        PrintWriter out = spec.commandLine().getOut();
        if (json(spec)) {
            printJson(out, reply);
        } else {
            out.print(text);
            out.flush();
        }
        return 0;
    }

    /** Whether {@code --json} was given (anywhere on the command line). */
    static boolean json(CommandSpec spec) {
        return root(spec).json;
    }

    /** Prints {@code value} (a record of the protocol, or a tree) as indented JSON, fields in snake_case. */
    static void printJson(PrintWriter out, Object value) {
        try {
            out.println(Wire.json().copy().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(value));
            out.flush();
        } catch (Exception e) {
            throw new IllegalStateException("cannot render JSON", e);
        }
    }

    /**
     * After this process changed the store's catalog (a tag, a branch, latest, a view's version),
     * asks a warpd on the socket to re-read its pointers and listings now rather than after its
     * TTL, so that its mount shows the change when the command returns. No warpd running is fine.
     *
     * @param what what was written, for the warning when warpd cannot be asked ("the tag")
     */
    static void refreshDaemon(WarpctlCommand root, String what) {
        Path socket = root.socket != null ? root.socket : SocketPaths.clientSocket(root.context.env(), ProcessIdentity.uid());
        if (!ControlClient.reachable(socket)) {
            return;
        }
        try (ControlClient c = ControlClient.connect(socket)) {
            c.call(Calls.REFRESH, RefreshCall.Request.ALL);
        } catch (RuntimeException e) {
            root.context.err().println("warpctl: " + what + " is written, but warpd at " + socket + " could not be asked"
                    + " to refresh (" + e.getMessage() + "); its mount shows it within its pointer TTL, or after"
                    + " 'warpctl refresh'");
        }
    }
}
