package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.ProcessIdentity;
import io.warpdata.daemon.control.SocketPaths;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Path;

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
        return root.socket != null ? root.socket : SocketPaths.defaultSocket(root.context.env(), ProcessIdentity.uid());
    }

    /** Connects to the daemon (typed DaemonUnavailable error if none answers). */
    static ControlClient connect(CommandSpec spec) {
        return ControlClient.connect(socket(spec));
    }

    /** Whether {@code --json} was given (anywhere on the command line). */
    static boolean json(CommandSpec spec) {
        return root(spec).json;
    }

    static void printJson(PrintWriter out, JsonNode node) {
        try {
            out.println(ControlProtocol.json().copy().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(node));
            out.flush();
        } catch (Exception e) {
            throw new IllegalStateException("cannot render JSON", e);
        }
    }
}
