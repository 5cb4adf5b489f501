package io.warpdata.daemon.mount;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs real programs (sha256sum, find, ls, python3, ...) the way a user would, with a time limit. */
final class Shell {
    private Shell() {
    }

    record Result(int exit, String out, String err) {
        Result requireSuccess() {
            if (exit != 0) {
                throw new AssertionError("exit " + exit + "\nstdout: " + out + "\nstderr: " + err);
            }
            return this;
        }
    }

    static Result run(String... command) {
        return run(null, Map.of(), 120, List.of(command));
    }

    /** Runs {@code bash -c script}. */
    static Result bash(String script) {
        return run(null, Map.of(), 120, List.of("bash", "-c", script));
    }

    static Result run(Path dir, Map<String, String> env, int timeoutSeconds, List<String> command) {
        ProcessBuilder pb = new ProcessBuilder(command);
        if (dir != null) {
            pb.directory(dir.toFile());
        }
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        }
        try {
            p.getOutputStream().close();
        } catch (IOException ignored) {
            // nothing to send
        }
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> drain(p.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> drain(p.getErrorStream()));
        try {
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(command + " did not finish within " + timeoutSeconds + " s");
            }
            return new Result(p.exitValue(), out.join(), err.join());
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private static String drain(java.io.InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
