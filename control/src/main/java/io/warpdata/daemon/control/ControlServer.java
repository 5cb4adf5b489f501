package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.manifest.WarpException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;

/**
 * The daemon's control socket: accepts clients on a Unix domain socket, reads one JSON request
 * per line, checks the peer against the {@link AccessPolicy}, runs the {@link Operation} on its
 * own virtual thread, and writes progress events and one result or error per request.
 *
 * <p>Failure isolation: every client has its own threads; a malformed line gets an error reply,
 * a line over {@link ControlProtocol#MAX_LINE_BYTES} gets an error and is skipped up to its
 * newline, an unknown op gets an error; a client that closes its end (or its write side) has
 * its running operations cancelled. Nothing a client does reaches the mount.
 */
public final class ControlServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlServer.class);
    /** Clients served at once: far above what warpctl users need, far below the fd limit. */
    static final int MAX_CLIENTS = 512;
    /** Operations one client may have running at once (warpctl runs one). */
    static final int MAX_RUNNING_PER_CLIENT = 16;
    /** Clients of one user at once (root's not counted): one user cannot take every slot from the others. */
    static final int MAX_CLIENTS_PER_USER = 64;
    /**
     * Bytes of unfinished request lines held for all clients together: lines are names and paths,
     * a few KB; 512 clients each sending 1 MiB without a newline filled the heap and took the
     * mount down with warpd. A client whose line would pass this is answered Busy and closed.
     */
    static final long PARTIAL_LINES_BUDGET = 16L << 20;

    /** Where and how to listen. */
    public record Config(Path socket, Optional<Integer> socketGid, int maxLineBytes) {
        public Config {
            if (maxLineBytes < 64) {
                throw new IllegalArgumentException("maxLineBytes " + maxLineBytes + " is too small");
            }
        }

        public Config(Path socket, Optional<Integer> socketGid) {
            this(socket, socketGid, ControlProtocol.MAX_LINE_BYTES);
        }
    }

    private final SocketFile socket;
    private final OperationRegistry operations;
    private final AccessPolicy policy;
    private final PeerResolver peers;
    private final int maxLineBytes;
    private final ThreadFactory threads = Thread.ofVirtual().name("warp-control-", 0).factory();
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    /** Bytes of unfinished lines all clients hold ({@link #PARTIAL_LINES_BUDGET}). */
    private final java.util.concurrent.atomic.AtomicLong partialBytes = new java.util.concurrent.atomic.AtomicLong();
    private final Thread acceptor;
    private volatile boolean closed;

    private ControlServer(Config config, OperationRegistry operations, AccessPolicy policy, PeerResolver peers) {
        this.operations = operations;
        this.policy = policy;
        this.peers = peers;
        this.maxLineBytes = config.maxLineBytes();
        this.socket = SocketFile.bind(config.socket(), config.socketGid());
        this.acceptor = Thread.ofPlatform().daemon().name("warp-control-accept").unstarted(this::acceptLoop);
    }

    /**
     * Binds the socket (safely, see {@link SocketFile}) and starts serving.
     *
     * @throws ControlException if the socket cannot be created safely or another daemon serves it
     */
    public static ControlServer start(Config config, OperationRegistry operations, AccessPolicy policy, PeerResolver peers) {
        ControlServer server = new ControlServer(config, operations, policy, peers);
        server.acceptor.start();
        LOG.info("control socket listening on {}", server.socket.path());
        return server;
    }

    public Path socketPath() {
        return socket.path();
    }

    /** Number of connected clients (for tests and status). */
    public int clientCount() {
        return connections.size();
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = socket.channel().accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                LOG.warn("control socket accept failed: {}", e.toString());
                continue;
            }
            Connection c = new Connection(ch);
            if (connections.size() >= MAX_CLIENTS) {
                c.send(ControlProtocol.error(NullNode.getInstance(), ControlException.BUSY,
                        "warpd already serves " + MAX_CLIENTS + " control clients", "close idle warpctl sessions and retry"));
                c.close();
                continue;
            }
            connections.add(c);
            threads.newThread(c::serve).start();
        }
    }

    /** Stops accepting, cancels every running operation, closes every client, removes the socket. */
    @Override
    public void close() {
        closed = true;
        socket.close();
        for (Connection c : connections) {
            c.close();
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One client: a reader thread plus one thread per running operation. */
    private final class Connection {
        private final SocketChannel channel;
        private final Object writeLock = new Object();
        private final Set<Cancellation> running = ConcurrentHashMap.newKeySet();
        private volatile boolean broken;
        private volatile boolean readerDone;
        private Peer peer;

        Connection(SocketChannel channel) {
            this.channel = channel;
        }

        void serve() {
            try {
                peer = peers.resolve(channel);
                if (peer.uid() != 0 && connections.stream().filter(c -> c.peer != null && c.peer.uid() == peer.uid())
                        .count() > MAX_CLIENTS_PER_USER) {
                    throw new ControlException(ControlException.BUSY, "uid " + peer.uid() + " already has "
                            + MAX_CLIENTS_PER_USER + " control connections open to warpd",
                            "close idle warpctl sessions or scripts holding connections, and retry");
                }
                readLoop();
            } catch (WarpException e) {
                send(ControlProtocol.error(NullNode.getInstance(), e));
                LOG.warn("control client refused: {}", io.warpdata.manifest.Printable.of(e.getMessage()));
            } catch (IOException e) {
                LOG.debug("control client read failed: {}", e.toString());
            } catch (RuntimeException e) {
                LOG.warn("control client failed", e);
            } finally {
                // The client is gone (or sent EOF): its operations have nobody to report to.
                partialBytes.addAndGet(-held);
                held = 0;
                readerDone = true;
                running.forEach(Cancellation::cancel);
                if (running.isEmpty()) {
                    close();
                }
            }
        }

        /** Bytes of this client's unfinished line counted in {@link #partialBytes}. */
        private long held;

        private void readLoop() throws IOException {
            ByteBuffer buf = ByteBuffer.allocate(16 * 1024);
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            boolean skipping = false;
            while (!closed) {
                buf.clear();
                int n = channel.read(buf);
                if (n < 0) {
                    return;
                }
                byte[] a = buf.array();
                int start = 0;
                for (int i = 0; i < n; i++) {
                    if (a[i] != '\n') {
                        continue;
                    }
                    if (!skipping) {
                        line.write(a, start, i - start);
                        if (line.size() > maxLineBytes) {
                            tooLarge();
                        } else {
                            handle(line.toByteArray());
                        }
                    }
                    line.reset();
                    hold(0);
                    skipping = false;
                    start = i + 1;
                }
                if (!skipping) {
                    line.write(a, start, n - start);
                    if (line.size() > maxLineBytes) {
                        // Answer now and drop the rest of this line as it arrives.
                        tooLarge();
                        line.reset();
                        skipping = true;
                    }
                    if (!hold(line.size())) {
                        send(ControlProtocol.error(NullNode.getInstance(), ControlException.BUSY,
                                "warpd holds too many unfinished request lines of its clients", "send each request"
                                        + " as one line ending in a newline, and retry"));
                        LOG.warn("control client uid {} closed: its unfinished request line passed the budget of all"
                                + " clients' ({} bytes)", peer.uid(), PARTIAL_LINES_BUDGET);
                        return;
                    }
                }
            }
        }

        /** Counts {@code bytes} of unfinished line for this client; false if all clients' would pass the budget. */
        private boolean hold(long bytes) {
            long total = partialBytes.addAndGet(bytes - held);
            held = bytes;
            return total <= PARTIAL_LINES_BUDGET;
        }

        private void tooLarge() {
            send(ControlProtocol.error(NullNode.getInstance(),
                    ControlException.REQUEST_TOO_LARGE,
                    "request line longer than " + maxLineBytes + " bytes; it was skipped",
                    "send smaller requests (arguments are names and paths, never data)"));
        }

        private void handle(byte[] line) {
            if (isBlank(line)) {
                return;
            }
            ControlProtocol.Request req;
            try {
                req = ControlProtocol.parseRequest(line);
            } catch (ControlProtocol.BadRequest e) {
                send(ControlProtocol.error(e.id(), e.asControlException()));
                return;
            }
            Optional<Operation> op = operations.find(req.op());
            if (op.isEmpty()) {
                send(ControlProtocol.error(req.id(), ControlException.UNKNOWN_OPERATION,
                        "unknown operation '" + req.op() + "'",
                        "use one of " + String.join(", ", operations.names()) + " (a newer warpctl than warpd?)"));
                return;
            }
            try {
                policy.check(req.op(), op.get().access(), peer);
            } catch (ControlException e) {
                LOG.info("control: refused {} to {}", io.warpdata.manifest.Printable.of(req.op()), peer.describe());
                send(ControlProtocol.error(req.id(), e));
                return;
            }
            if (running.size() >= MAX_RUNNING_PER_CLIENT) {
                send(ControlProtocol.error(req.id(), ControlException.BUSY,
                        "this connection already runs " + MAX_RUNNING_PER_CLIENT + " operations",
                        "wait for a result before sending more requests, or use another connection"));
                return;
            }
            Cancellation cancel = new Cancellation();
            running.add(cancel);
            threads.newThread(() -> run(op.get(), req, cancel)).start();
        }

        private void run(Operation op, ControlProtocol.Request req, Cancellation cancel) {
            JsonNode id = req.id();
            OperationContext ctx = new OperationContext(new Args(req.op(), req.args()), peer,
                    fields -> send(ControlProtocol.progress(id, fields)), cancel);
            ObjectNode reply;
            try {
                reply = ControlProtocol.result(id, op.run(ctx));
            } catch (WarpException e) {
                if (!ControlException.CANCELLED.equals(e.type())) {
                    LOG.info("control: {} for {} failed: {}", io.warpdata.manifest.Printable.of(req.op()), peer.describe(), io.warpdata.manifest.Printable.of(e.getMessage()));
                }
                reply = ControlProtocol.error(id, e);
            } catch (OutOfMemoryError e) {
                // Answered, or its client would wait for ever; the JVM frees what the operation held.
                LOG.error("control: {} for {} ran out of memory", io.warpdata.manifest.Printable.of(req.op()), peer.describe(), e);
                reply = ControlProtocol.error(id, ControlException.BUSY,
                        req.op() + " could not run: warpd ran out of memory (" + e.getMessage() + ")",
                        "retry when fewer clients read at once, or give warpd more memory (WARP_HEAP,"
                                + " WARP_DIRECT_MEMORY); see warpd's log");
            } catch (RuntimeException | Error e) {
                LOG.warn("control: {} for {} failed unexpectedly", io.warpdata.manifest.Printable.of(req.op()), peer.describe(), e);
                reply = ControlProtocol.error(id, ControlException.INTERNAL,
                        req.op() + " failed inside the daemon: " + e,
                        "see warpd's log (journalctl -u warpd) and report it");
            }
            // Reply before leaving 'running', so the reader never closes the channel under it.
            send(reply);
            running.remove(cancel);
            if (readerDone && running.isEmpty()) {
                close();
            }
        }

        /** Writes one line; a failed write means the client is gone: cancel its operations. */
        void send(JsonNode node) {
            if (broken) {
                return;
            }
            ByteBuffer bytes = ByteBuffer.wrap(ControlProtocol.line(node));
            synchronized (writeLock) {
                try {
                    while (bytes.hasRemaining()) {
                        channel.write(bytes);
                    }
                } catch (IOException e) {
                    broken = true;
                    running.forEach(Cancellation::cancel);
                }
            }
        }

        void close() {
            running.forEach(Cancellation::cancel);
            try {
                channel.close();
            } catch (IOException e) {
                // Nothing left to tell this client.
            }
            connections.remove(this);
        }

        private static boolean isBlank(byte[] line) {
            for (byte b : line) {
                if (b != ' ' && b != '\t' && b != '\r') {
                    return false;
                }
            }
            return true;
        }
    }

    @Override
    public String toString() {
        return "ControlServer" + Arrays.asList(socket.path(), operations.names());
    }
}
