package io.warpdata.daemon.ops;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs one of the repository's scripts (or any command) as a child process and captures it. */
record ScriptRun(int exitCode, String stdout, String stderr) {
    /** The repository root: failsafe runs with the daemon module as working directory. */
    static Path repoRoot() {
        Path root = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
        if (!Files.isRegularFile(root.resolve("scripts/lib/common.sh"))) {
            throw new IllegalStateException("tests must run from the daemon module of a Warp checkout, not " + root);
        }
        return root;
    }

    /** The shaded jar the package phase built, which the scripts are pointed at (no rebuilds). */
    static Path builtJar() {
        Path jar = repoRoot().resolve("daemon/target/warp.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: run the integration tests through 'mvn verify'");
        }
        return jar;
    }

    static ScriptRun run(List<String> command, Map<String, String> env, Duration timeout)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile("warp-script", ".out");
        Path err = Files.createTempFile("warp-script", ".err");
        try {
            ProcessBuilder pb = new ProcessBuilder(command)
                    .directory(repoRoot().toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            pb.environment().putAll(env);
            Process process = pb.start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor();
                throw new IllegalStateException(command + " did not finish within " + timeout + "; stderr: "
                        + Files.readString(err, StandardCharsets.UTF_8));
            }
            return new ScriptRun(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    @Override
    public String toString() {
        return "exit " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
    }
}
