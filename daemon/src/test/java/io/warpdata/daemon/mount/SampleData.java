package io.warpdata.daemon.mount;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Generates real source data (Parquet written by DuckDB, PNG and JPEG images in class
 * folders) and publishes it with the real publish pipeline.
 */
final class SampleData {
    static final List<String> CLASSES = List.of("bird", "cat", "dog");
    static final int IMAGES_PER_CLASS = 7;

    private SampleData() {
    }

    /** {@code dir/main/part-{0,1}.parquet} with {@code rows} rows in total (id, label, name). */
    static void writeParquet(Path dir, long rows, long seed) {
        try {
            Files.createDirectories(dir.resolve("main"));
            try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
                long half = rows / 2;
                s.execute("COPY (SELECT i AS id, (i * " + seed + ") % 10 AS label, 'name_' || i AS name, i * 0.5 AS score"
                        + " FROM range(0, " + half + ") t(i)) TO '" + dir.resolve("main/part-0.parquet") + "' (FORMAT PARQUET)");
                s.execute("COPY (SELECT i AS id, (i * " + seed + ") % 10 AS label, 'name_' || i AS name, i * 0.5 AS score"
                        + " FROM range(" + half + ", " + rows + ") t(i)) TO '" + dir.resolve("main/part-1.parquet") + "' (FORMAT PARQUET)");
            }
        } catch (IOException | SQLException e) {
            throw new IllegalStateException("cannot write sample Parquet", e);
        }
    }

    /** {@code dir/<class>/img<i>.png|jpg}: 32x32 RGB, alternating PNG and JPEG, plus a nested folder. */
    static void writeImages(Path dir, int variant) {
        try {
            for (int c = 0; c < CLASSES.size(); c++) {
                Path classDir = Files.createDirectories(dir.resolve(CLASSES.get(c)));
                for (int i = 0; i < IMAGES_PER_CLASS; i++) {
                    BufferedImage img = new BufferedImage(32, 32, BufferedImage.TYPE_INT_RGB);
                    for (int y = 0; y < 32; y++) {
                        for (int x = 0; x < 32; x++) {
                            img.setRGB(x, y, new Color((x * 8 + c * 80) & 255, (y * 8 + i * 30) & 255, (variant * 60 + x * y) & 255).getRGB());
                        }
                    }
                    String format = i % 2 == 0 ? "png" : "jpg";
                    if (!ImageIO.write(img, format, classDir.resolve("img" + i + "." + format).toFile())) {
                        throw new IllegalStateException("no ImageIO writer for " + format);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static VersionHash publish(BlobStore store, Path staging, DatasetId id, Path src, boolean setLatest) {
        return publish(store, staging, id, src, setLatest, PublishRequest.DEFAULT_SHARD_SIZE);
    }

    /** As {@link #publish(BlobStore, Path, DatasetId, Path, boolean)}, packing the images into shards of about {@code shardSize}. */
    static VersionHash publish(BlobStore store, Path staging, DatasetId id, Path src, boolean setLatest, long shardSize) {
        Publisher publisher = new Publisher(store, new Catalog(store), Clock.systemUTC(), "mount-it", staging, 4, PublishProgress.NONE);
        TreeMap<String, List<String>> tables = new TreeMap<>(Map.of("main", List.of(src.resolve("main").toString() + "/*.parquet")));
        TreeMap<String, List<String>> artifacts = new TreeMap<>(Map.of("images", List.of(src.resolve("images").toString())));
        PublishRequest request = new PublishRequest(id, tables, artifacts, List.of(), setLatest, shardSize, src);
        return publisher.publish(request).version();
    }

    /** SHA-256 of every regular file under {@code root}, by path relative to it. */
    static Map<String, String> hashes(Path root) {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : files.filter(Files::isRegularFile).toList()) {
                out.put(root.relativize(p).toString(), sha256(Files.readAllBytes(p)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
