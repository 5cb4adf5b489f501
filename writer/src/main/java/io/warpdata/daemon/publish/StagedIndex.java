package io.warpdata.daemon.publish;

import io.warpdata.manifest.MemberIndex;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A member index ready to upload: the blob the manifest names ({@code top}) and, for an index of
 * more than {@link #PART_MEMBERS} members, the parts that top names by hash (docs/manifest.md).
 * A small index stays one flat blob; a larger one is parted, so that a reader fetches the top
 * and the parts it touches, never the whole index.
 */
public record StagedIndex(StagedBlob top, List<StagedBlob> parts) {
    /** Members per part, at most ({@link MemberIndex#PART_MEMBERS}). */
    public static final int PART_MEMBERS = MemberIndex.PART_MEMBERS;

    public StagedIndex {
        Objects.requireNonNull(top, "top");
        parts = List.copyOf(parts);
    }

    /** Stages {@code index}, parts held in memory. */
    public static StagedIndex of(MemberIndex index) {
        return of(index, PART_MEMBERS, Optional.empty());
    }

    /**
     * Stages {@code index} with parts of {@code partMembers} members, written as files under
     * {@code dir} if given (so that they are not all on the heap at once).
     */
    public static StagedIndex of(MemberIndex index, int partMembers, Optional<Path> dir) {
        if (index.size() <= partMembers) {
            return new StagedIndex(StagedBlob.ofBytes(index.serialize()), List.of());
        }
        List<StagedBlob> parts = new ArrayList<>();
        try {
            if (dir.isPresent()) {
                Files.createDirectories(dir.get());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + dir.get(), e);
        }
        byte[] top = index.writeParts(partMembers, bytes -> {
            if (dir.isEmpty()) {
                parts.add(StagedBlob.ofBytes(bytes));
                return;
            }
            Path file = dir.get().resolve("index-part-" + parts.size());
            try {
                Files.write(file, bytes);
            } catch (IOException e) {
                throw StagingFullException.of("staging a member index part in " + file, file.getParent(), e);
            }
            parts.add(StagedBlob.ofStagedFile(file));
        });
        return new StagedIndex(StagedBlob.ofBytes(top), parts);
    }

    /** Every blob to upload: the top and the parts. */
    public List<StagedBlob> blobs() {
        List<StagedBlob> all = new ArrayList<>(parts.size() + 1);
        all.add(top);
        all.addAll(parts);
        return all;
    }
}
