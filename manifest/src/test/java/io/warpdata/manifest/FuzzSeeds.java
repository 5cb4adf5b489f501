package io.warpdata.manifest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * Writes the valid seed inputs of {@link ParsersFuzzTest} into the test resources (run once by
 * hand when a format changes: {@code java FuzzSeeds.java <module root>}; the seeds are committed).
 */
final class FuzzSeeds {
    private FuzzSeeds() {
    }

    public static void main(String[] args) throws IOException {
        Path root = Path.of(args.length > 0 ? args[0] : ".")
                .resolve("src/test/resources/io/warpdata/manifest/ParsersFuzzTestInputs");
        Random r = new Random(7);
        for (int i = 0; i < 4; i++) {
            write(root.resolve("manifestJson/seed-" + i), ManifestCodec.toJson(Manifests.random(r)));
        }
        MemberIndexBuilder b = new MemberIndexBuilder();
        b.add("a/b.png", 0, 512, 10, 0644, BlobId.of(new byte[] {1}));
        b.add("a/c/d.txt", 0, 1024, 3, 0755, BlobId.of(new byte[] {2}));
        b.add("z", 1, 512, 0, 0644, BlobId.of(new byte[0]));
        write(root.resolve("memberIndex/seed-0"), b.build().serialize());
        write(root.resolve("blockHashList/seed-0"),
                BlockHashList.of(new byte[3 * BlockHashList.MIN_BLOCK_SIZE + 17], BlockHashList.MIN_BLOCK_SIZE).serialize());
        write(root.resolve("datasetRef/seed-0"), "vision/pets@0123abcd".getBytes(StandardCharsets.UTF_8));
        write(root.resolve("datasetRef/seed-1"), "vision/pets@v1.0".getBytes(StandardCharsets.UTF_8));
    }

    private static void write(Path file, byte[] bytes) throws IOException {
        Files.createDirectories(file.getParent());
        Files.write(file, bytes);
    }
}
