package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.protocol.Call;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.Wire;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * warpctl's side of the control socket: one connection, one request at a time. Closing the
 * client (or the process exiting, e.g. on Ctrl-C) makes the daemon cancel whatever the request
 * was doing.
 */
public final class ControlClient implements AutoCloseable {
    private final Path socket;
    private final SocketChannel channel;
    private final BufferedReader in;
    private long nextId = 1;
    /** The longest warpd may stay silent within a call (0: no limit); see {@link #answering}. */
    private long silenceNanos;
    private volatile long lastHeard;
    private volatile boolean timedOut;

    private ControlClient(Path socket, SocketChannel channel) {
        this.socket = socket;
        this.channel = channel;
        this.in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel), StandardCharsets.UTF_8));
    }

    /**
     * Connects to the daemon.
     *
     * @throws ControlException of type {@link ControlException#DAEMON_UNAVAILABLE} saying how
     *         to start one or get access
     */
    public static ControlClient connect(Path socket) {
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(socket));
            return new ControlClient(socket, ch);
        } catch (IOException e) {
            close(ch);
            if (e instanceof AccessDeniedException || String.valueOf(e.getMessage()).contains("Permission denied")) {
                // warpd is there, but the socket (or its folder) does not let this user in.
                throw new ControlException(ControlException.DAEMON_UNAVAILABLE,
                        "warpd's control socket " + socket + " does not let this user in (permission denied)",
                        joinAdvice(socket, groupOf(socket), System.getProperty("user.name")), e);
            }
            String why = Files.exists(socket) ? "no warpd answers on " + socket + " (a stale socket?)"
                    : "no warpd control socket at " + socket;
            throw new ControlException(ControlException.DAEMON_UNAVAILABLE, why,
                    "start the daemon (the installed service: systemctl start warpd, as root; where systemd does not"
                            + " run, the command scripts/install printed; or scripts/warpd --mount /warp --remote URI),"
                            + " or point warpctl at it with --socket PATH / WARP_SOCKET", e);
        }
    }

    /** Who may use {@code socket}, as {@code ls -l} shows it: "group G, mode rw-rw----". */
    /**
     * The group that may use the socket: the socket's, else its folder's (this user may not be
     * allowed to look inside the folder: /run/warp is 0750), else null.
     */
    private static String groupOf(Path socket) {
        for (Path p : new Path[] {socket, socket.getParent()}) {
            try {
                if (p != null) {
                    return Files.readAttributes(p, java.nio.file.attribute.PosixFileAttributes.class).group().getName();
                }
            } catch (IOException | UnsupportedOperationException e) {
                // the next
            }
        }
        return null;
    }

    /**
     * What to do when the socket does not let this user in. Audit 37: it said to run
     * {@code ls -l} on a socket this user may not look at, and, for a warpd started without
     * {@code --socket-group}, amounted to joining group root.
     */
    static String joinAdvice(Path socket, String group, String user) {
        if (group == null) {
            return "ask warpd's administrator which group may use it (ls -ld " + socket.getParent() + " shows its folder's"
                    + " group) and join that group (sudo usermod -aG GROUP " + user + ", then log in again), or run as"
                    + " warpd's user or root";
        }
        if (group.equals("root")) {
            return "only warpd's user and root may use it: have warpd started with --socket-group GROUP (socket-group = GROUP"
                    + " in its config file) and join that group (sudo usermod -aG GROUP " + user + ", then log in again),"
                    + " or run as warpd's user or root";
        }
        return "join its group " + group + " (sudo usermod -aG " + group + " " + user + ", then log in again), or run as"
                + " warpd's user or root";
    }

    /**
     * Makes every call of this client fail when warpd sends nothing for {@code silence} (a warpd
     * that is stopped, swapped out or wedged accepts the connection and never answers: {@code
     * warpctl status} and {@code doctor}, the commands one runs to find that out, hung for good).
     * Each message heard, a progress event too, starts the silence again. For quick calls only:
     * a long one may be silent for long.
     */
    public ControlClient answering(Duration silence) {
        this.silenceNanos = silence.toNanos();
        return this;
    }

    /** True if a daemon accepts connections on {@code socket}. */
    public static boolean reachable(Path socket) {
        return SocketFile.answers(socket);
    }

    /** Sends {@code call}'s request and waits for its result, ignoring its events. */
    public <Q, R, E> R call(Call<Q, R, E> call, Q request) {
        return call(call, request, e -> { });
    }

    /** Sends an operation that takes no arguments and waits for its result. */
    public <R, E> R call(Call<Empty, R, E> call) {
        return call(call, Empty.INSTANCE);
    }

    /**
     * Sends {@code call}'s request, passes each of its events to {@code events}, and returns the
     * result as {@code call}'s reply record.
     *
     * @throws ControlException the daemon's typed error; of type {@link Wire#INCOMPATIBLE_PEER}
     *         when the answer lacks a field the record requires (warpd of another version)
     */
    public <Q, R, E> R call(Call<Q, R, E> call, Q request, Consumer<? super E> events) {
        ObjectNode args = Wire.tree(request);
        JsonNode result = call(call.op(), args, msg -> {
            if (call.event().equals(msg.path(ControlProtocol.EVENT).asText())) {
                events.accept(Wire.reply(call.op(), msg, call.events()));
            }
        });
        return Wire.reply(call.op(), result, call.reply());
    }

    /** Sends one request of any shape and waits for its result; no progress (tests speak raw JSON with it). */
    public JsonNode call(String op, ObjectNode args) {
        return call(op, args, p -> { });
    }

    /**
     * Sends one request, passes each progress event to {@code progress}, and returns the result.
     *
     * @throws io.warpdata.manifest.WarpException the daemon's typed error (as a
     *         {@link ControlException} of the same type), or DaemonUnavailable if the
     *         connection breaks
     */
    public JsonNode call(String op, ObjectNode args, Consumer<JsonNode> progress) {
        long id = nextId++;
        Thread watchdog = silenceNanos > 0 ? watch() : null;
        try {
            ByteBuffer req = ByteBuffer.wrap(ControlProtocol.line(ControlProtocol.request(id, op, args)));
            while (req.hasRemaining()) {
                channel.write(req);
            }
            while (true) {
                String line = in.readLine();
                lastHeard = System.nanoTime();
                if (line == null) {
                    throw new ControlException(ControlException.DAEMON_UNAVAILABLE,
                            "warpd closed the control connection during '" + op + "'",
                            "check warpd's log (journalctl -u warpd); it may have stopped" + (op.startsWith("publish")
                                    || op.startsWith("view") ? ". A publish cut short moves no pointer until its very"
                                    + " end, and what it uploaded is reused: run the same command again (warpctl"
                                    + " list-remote WS/NAME shows whether a version was made and where latest points)"
                                    : ""));
                }
                JsonNode msg = ControlProtocol.json().readTree(line);
                ControlProtocol.Incoming in = ControlProtocol.incoming(msg);
                JsonNode msgId = in.id();
                boolean ours = msgId != null && msgId.canConvertToLong() && msgId.asLong() == id;
                boolean unaddressed = msgId == null || msgId.isNull();
                if (!ours && !unaddressed) {
                    continue;
                }
                if (in.event() != null) {
                    progress.accept(msg);
                    continue;
                }
                if (in.ok()) {
                    return in.result() == null ? ControlProtocol.object() : in.result();
                }
                ControlProtocol.ErrorBody err = in.error() == null ? ControlProtocol.ErrorBody.NONE : in.error();
                throw new ControlException(err.type() == null ? ControlException.INTERNAL : err.type(),
                        err.message() == null ? "warpd reported an error" : err.message(),
                        err.nextStep() == null ? "" : err.nextStep(), null, err.details());
            }
        } catch (IOException e) {
            if (timedOut) {
                throw new ControlException(ControlException.DAEMON_UNAVAILABLE, "warpd at " + socket + " took the"
                        + " connection but did not answer '" + op + "' within " + silenceNanos / 1_000_000_000L + " s",
                        "it may be stopped (ps -o stat,pid,args -C java: state T), swapping or overloaded; check its log"
                                + " (journalctl -u warpd) and restart it (systemctl restart warpd)", e);
            }
            throw new ControlException(ControlException.DAEMON_UNAVAILABLE,
                    "lost the control connection to " + socket + " during '" + op + "': " + e.getMessage(),
                    "check that warpd is running (warpctl status)", e);
        } finally {
            if (watchdog != null) {
                watchdog.interrupt();
            }
        }
    }

    /** Closes the connection when warpd has been silent for {@link #silenceNanos}: the blocked read then fails. */
    private Thread watch() {
        lastHeard = System.nanoTime();
        return Thread.ofVirtual().name("warpctl-answer-watch").start(() -> {
            try {
                while (true) {
                    long wait = lastHeard + silenceNanos - System.nanoTime();
                    if (wait <= 0) {
                        timedOut = true;
                        close(channel);
                        return;
                    }
                    java.util.concurrent.TimeUnit.NANOSECONDS.sleep(wait);
                }
            } catch (InterruptedException done) {
                // the call ended
            }
        });
    }

    /**
     * Closes the sending side only: the daemon cancels what runs on this connection (as on
     * {@link #close}) and can still send its answer, which a call under way then receives.
     */
    public void finishSending() {
        try {
            channel.shutdownOutput();
        } catch (IOException e) {
            // Already closed: the daemon has been told.
        }
    }

    @Override
    public void close() {
        close(channel);
    }

    private static void close(SocketChannel ch) {
        if (ch == null) {
            return;
        }
        try {
            ch.close();
        } catch (IOException e) {
            // Closing is how we tell the daemon we are gone; nothing else to do.
        }
    }
}
