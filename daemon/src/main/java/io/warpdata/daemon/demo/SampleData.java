package io.warpdata.daemon.demo;

import io.warpdata.daemon.inspect.DuckDb;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import javax.imageio.ImageIO;

/**
 * Generates the demo's sample dataset "pets": small PNG images in one folder per class, and a
 * Parquet table listing them with columns {@code id, path, label, split}, where {@code path} is
 * the image's path inside the images folder (what {@code --bind main.path=images:image} binds).
 *
 * <p>The output is deterministic (seeded shapes, no timestamps), so publishing it again yields
 * the same version hash and uploads nothing: running the demo twice shows content addressing.
 *
 * <p>Usage: {@code java -cp warp.jar io.warpdata.daemon.demo.SampleData OUTPUT_DIR [PER_CLASS]}
 * writes {@code OUTPUT_DIR/images/<label>/<label>_NNN.png} and {@code OUTPUT_DIR/table/main.parquet}.
 */
public final class SampleData {
    /** The classes, one image folder each. */
    public static final List<String> LABELS = List.of("cat", "dog", "fish");
    /** Images per class by default: 60 images in all, small enough to publish in a second. */
    public static final int DEFAULT_PER_CLASS = 20;
    private static final int SIZE = 64;

    private final Path root;
    private final int perClass;

    /** What {@link #generate()} wrote. */
    public record Output(Path images, Path table, int imageCount) {
    }

    public SampleData(Path root, int perClass) {
        if (perClass < 1 || perClass > 10_000) {
            throw new IllegalArgumentException("images per class must be 1..10000, got " + perClass);
        }
        this.root = root;
        this.perClass = perClass;
    }

    /**
     * Writes the images and the table, replacing any earlier output under the root.
     *
     * @throws IOException when a file cannot be written
     * @throws SQLException when DuckDB cannot write the Parquet table
     */
    public Output generate() throws IOException, SQLException {
        Path images = root.resolve("images");
        Path table = root.resolve("table").resolve("main.parquet");
        deleteTree(images);
        Files.deleteIfExists(table);
        Files.createDirectories(table.getParent());
        try (Connection db = DuckDb.connect()) {
            try (Statement st = db.createStatement()) {
                st.execute("CREATE TABLE main (id INTEGER, path VARCHAR, label VARCHAR, split VARCHAR)");
            }
            int id = 0;
            try (PreparedStatement insert = db.prepareStatement("INSERT INTO main VALUES (?, ?, ?, ?)")) {
                for (String label : LABELS) {
                    Path dir = Files.createDirectories(images.resolve(label));
                    for (int i = 0; i < perClass; i++) {
                        String name = String.format("%s_%03d.png", label, i);
                        writeImage(label, i, dir.resolve(name));
                        insert.setInt(1, id++);
                        insert.setString(2, label + "/" + name);
                        insert.setString(3, label);
                        // Every fifth image is held out: a realistic train/val split to query.
                        insert.setString(4, i % 5 == 4 ? "val" : "train");
                        insert.addBatch();
                    }
                }
                insert.executeBatch();
            }
            try (Statement st = db.createStatement()) {
                st.execute("COPY (SELECT * FROM main ORDER BY id) TO '" + table.toString().replace("'", "''")
                        + "' (FORMAT PARQUET)");
            }
            return new Output(images, table, id);
        }
    }

    /** Draws a recognisable, seeded picture: a coloured background and the class's shape. */
    private static void writeImage(String label, int index, Path file) throws IOException {
        Random random = new Random(31L * label.hashCode() + index);
        BufferedImage image = new BufferedImage(SIZE, SIZE, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setColor(new Color(random.nextInt(0x1000000)).brighter());
            g.fillRect(0, 0, SIZE, SIZE);
            g.setColor(new Color(random.nextInt(0x1000000)).darker());
            int x = 8 + random.nextInt(16);
            int y = 8 + random.nextInt(16);
            switch (label) {
                case "cat" -> {
                    g.fillOval(x, y + 8, 32, 28);
                    g.fillPolygon(new int[] {x + 2, x + 10, x + 6}, new int[] {y + 14, y + 12, y}, 3);
                    g.fillPolygon(new int[] {x + 22, x + 30, x + 26}, new int[] {y + 12, y + 14, y}, 3);
                }
                case "dog" -> {
                    g.fillOval(x, y, 34, 30);
                    g.fillOval(x - 6, y + 4, 10, 22);
                    g.fillOval(x + 30, y + 4, 10, 22);
                }
                default -> {
                    g.fillOval(x, y + 6, 30, 18);
                    g.fillPolygon(new int[] {x + 28, x + 40, x + 40}, new int[] {y + 15, y + 6, y + 24}, 3);
                }
            }
        } finally {
            g.dispose();
        }
        if (!ImageIO.write(image, "png", file.toFile())) {
            throw new IOException("no PNG writer available to write " + file);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    public static void main(String[] args) {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: java -cp warp.jar " + SampleData.class.getName() + " OUTPUT_DIR [PER_CLASS]");
            System.exit(2);
        }
        System.setProperty("java.awt.headless", "true");
        try {
            int perClass = args.length == 2 ? Integer.parseInt(args[1]) : DEFAULT_PER_CLASS;
            Output out = new SampleData(Path.of(args[0]).toAbsolutePath(), perClass).generate();
            System.out.printf("wrote %d images under %s and the table %s%n", out.imageCount(), out.images(), out.table());
        } catch (IOException | SQLException | RuntimeException e) {
            System.err.println("error: could not generate the sample data under " + args[0] + ": " + e.getMessage());
            System.exit(1);
        }
    }
}
