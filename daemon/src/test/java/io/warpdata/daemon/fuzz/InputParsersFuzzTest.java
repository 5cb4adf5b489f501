package io.warpdata.daemon.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.TarShardIndexer;
import io.warpdata.manifest.WarpException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Parsers of bytes that reach warpd and warpctl from outside: tar shards published as they are
 * ({@link TarShardIndexer}) and control-socket request lines. A result or a typed
 * {@link WarpException} is the only acceptable outcome (see the manifest module's
 * ParsersFuzzTest for the rules); inputs live under
 * {@code src/test/resources/io/warpdata/daemon/fuzz/InputParsersFuzzTestInputs/<method>/}.
 */
class InputParsersFuzzTest {
    private static final Path TAR;

    static {
        try {
            Path dir = Files.createTempDirectory("warp-fuzz-tar");
            dir.toFile().deleteOnExit();
            TAR = dir.resolve("shard-000.tar");
            // Deleted before its directory (the JVM deletes in reverse order of registration):
            // a directory that still holds the tar is not deleted, and each run left one in /tmp.
            TAR.toFile().deleteOnExit();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @FuzzTest
    void existingTarShard(byte[] input) throws IOException {
        Files.write(TAR, input);
        try {
            new TarShardIndexer().index("fuzz", List.of(TAR), PublishProgress.NONE);
        } catch (WarpException expected) {
            // Refused, naming the tar and the entry: fine.
        }
    }

    @FuzzTest
    void controlRequestLine(byte[] input) {
        try {
            ControlProtocol.parseRequest(input);
        } catch (WarpException expected) {
            // A bad request answered as such: fine.
        }
    }
}
