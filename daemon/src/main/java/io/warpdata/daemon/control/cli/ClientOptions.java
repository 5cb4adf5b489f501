package io.warpdata.daemon.control.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.ProcessIdentity;
import io.warpdata.daemon.control.SocketPaths;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;

/**
 * What every control subcommand shares: {@code --socket}, and {@code --json} (inherited from the
 * warpctl root when it defines one, else declared here by {@link JsonOption}).
 */
public final class ClientOptions {
    @Option(names = "--socket", paramLabel = "PATH",
            description = "warpd's control socket (default: $WARP_SOCKET, /run/warp/warpd.sock as root, else $XDG_RUNTIME_DIR/warp/warpd.sock)")
    Path socket;

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    /**
     * The socket: this command's {@code --socket}, else a parent's (e.g. {@code warpctl --socket X
     * status} when the root defines a local {@code --socket}), else the default for the environment.
     */
    public Path socket(Map<String, String> env) {
        if (socket != null) {
            return socket;
        }
        for (CommandSpec s = mixee == null ? null : mixee.parent(); s != null; s = s.parent()) {
            OptionSpec o = s.findOption("--socket");
            if (o != null && o.getValue() != null) {
                return Path.of(o.getValue().toString());
            }
        }
        return SocketPaths.defaultSocket(env, ProcessIdentity.uid());
    }

    /** Connects to the daemon (typed DaemonUnavailable error if none answers). */
    public ControlClient connect(Map<String, String> env) {
        return ControlClient.connect(socket(env));
    }

    /** True if {@code --json} was given, on this command or any parent that defines it. */
    static boolean json(CommandSpec spec) {
        for (CommandSpec s = spec; s != null; s = s.parent()) {
            OptionSpec o = s.findOption("--json");
            if (o != null && Boolean.TRUE.equals(o.getValue())) {
                return true;
            }
        }
        return false;
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
