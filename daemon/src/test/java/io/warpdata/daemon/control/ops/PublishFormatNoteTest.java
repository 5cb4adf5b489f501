package io.warpdata.daemon.control.ops;

import io.warpdata.daemon.control.protocol.PublishCall;
import io.warpdata.daemon.publish.PublishResult;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A publish through warpd notes a version whose manifest format its client may not read: a client
 * of an older release names fewer options, and reads only the formats of its day (audit 42).
 */
class PublishFormatNoteTest {
    private static PublishResult published(int format) {
        return new PublishResult(DatasetId.parse("ws/t"), new VersionHash("ab".repeat(32)), 0, 0, 0, 1, 4, 1, 0, 4096,
                0, true, true, List.of("latest -> abab"), List.of("a note of the publish"), format);
    }

    /** What a client sends: which formats it reads, and the options it knows. */
    private static PublishCall.Request from(Integer readsFormat, Boolean tensorHashes, Boolean shardFiles) {
        return new PublishCall.Request("ws/t", Map.of(), Map.of(), null, true, null, null, false, false, shardFiles,
                tensorHashes, readsFormat, null);
    }

    @Test
    void aVersionNewerThanItsClientReadsIsNotedWithWhatToDo() {
        // A client of the release before format 5 names tensor_hashes but not reads_format.
        PublishResult r = PublishOperation.withFormatNote(published(5), from(null, true, true));
        assertThat(r.notes()).hasSize(2).first().isEqualTo("a note of the publish");
        assertThat(r.notes().get(1)).contains("manifest format 5", "deflated headers", "before 2026-12-01",
                "--no-daemon", "upgrade");
        assertThat(r).usingRecursiveComparison().ignoringFields("notes").isEqualTo(published(5));
        // One that names only shard_files reads format 3, not 4.
        assertThat(PublishOperation.withFormatNote(published(4), from(null, null, true)).notes().get(1))
                .contains("manifest format 4", "per-tensor hashes", "7f889ead");
        assertThat(PublishOperation.withFormatNote(published(3), from(null, null, null)).notes().get(1))
                .contains("manifest format 3", "00a20612");
    }

    @Test
    void aVersionItsClientReadsHasNoNote() {
        assertThat(PublishOperation.withFormatNote(published(5), from(5, true, true)).notes())
                .containsExactly("a note of the publish");
        assertThat(PublishOperation.withFormatNote(published(4), from(null, true, true)).notes()).hasSize(1);
        assertThat(PublishOperation.withFormatNote(published(2), from(null, null, null)).notes()).hasSize(1);
        // A newer client than this warpd says so: nothing to note.
        assertThat(PublishOperation.withFormatNote(published(5), from(6, true, true)).notes()).hasSize(1);
    }
}
