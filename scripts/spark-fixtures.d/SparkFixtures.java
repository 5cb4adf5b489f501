import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.sum;

/**
 * Writes Warp's Spark test data with a real Spark in local mode (run by scripts/spark-fixtures,
 * which says how): OUT/events, a partitionBy Parquet dataset as Spark commits it (_SUCCESS, .crc
 * files, Spark's part names); OUT/embeddings, seed 001's shape (safetensors parts and
 * dataset_manifest.json) written from inside a Spark job; and OUT/expected, what Spark reads back
 * from both, as CSV, for the tests to compare with.
 */
public final class SparkFixtures {
    private SparkFixtures() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: SparkFixtures OUT_DIR");
            System.exit(2);
        }
        Path out = Path.of(args[0]).toAbsolutePath();
        Files.createDirectories(out.resolve("expected"));
        SparkSession spark = SparkSession.builder()
                .master("local[2]")
                .appName("warp-spark-fixtures")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.shuffle.partitions", "3")
                .getOrCreate();
        try {
            events(spark, out);
            embeddings(spark, out);
            Files.writeString(out.resolve("expected/spark-version.txt"), spark.version() + "\n");
        } finally {
            spark.stop();
        }
    }

    /** A partitionBy Parquet dataset, and the rows and per-partition aggregates Spark reads back from it. */
    private static void events(SparkSession spark, Path out) throws IOException {
        String dir = out.resolve("events").toString();
        spark.range(0, 60).selectExpr(
                        "id",
                        "CAST(2025 + id % 2 AS INT) AS year",
                        "element_at(array('cat', 'dog', 'fox'), CAST(id % 3 + 1 AS INT)) AS cls",
                        "CAST(id * 0.25 AS DOUBLE) AS score",
                        "concat('event-', id) AS name")
                .repartition(2)
                .write()
                .partitionBy("year", "cls")
                .parquet(dir);

        Dataset<Row> back = spark.read().parquet(dir);
        List<String> rows = new ArrayList<>(List.of("id,year,cls,score,name"));
        for (Row r : back.select("id", "year", "cls", "score", "name").orderBy("id").collectAsList()) {
            rows.add(r.getLong(0) + "," + r.getInt(1) + "," + r.getString(2) + "," + r.getDouble(3) + "," + r.getString(4));
        }
        Files.write(out.resolve("expected/events-rows.csv"), rows);

        List<String> aggregates = new ArrayList<>(List.of("year,cls,rows,sum_id,sum_score"));
        for (Row r : back.groupBy("year", "cls").agg(count("*"), sum("id"), sum("score"))
                .orderBy("year", "cls").collectAsList()) {
            aggregates.add(r.getInt(0) + "," + r.getString(1) + "," + r.getLong(2) + "," + r.getLong(3) + "," + r.getDouble(4));
        }
        Files.write(out.resolve("expected/events-aggregates.csv"), aggregates);
    }

    /**
     * Seed 001's batch mode from a Spark job: each task stacks its rows into one tensor per
     * column ({@code sample_id} I64 [n], {@code label} I64 [n], {@code features} F32 [n, 8]) and
     * writes {@code part-{partition:05d}-{uuid}.safetensors}; the driver aggregates the tasks'
     * reports into dataset_manifest.json, as the seed's BatchWrite.commit() does. Then Spark reads
     * the files back (binaryFile source) and decodes every sample.
     */
    private static void embeddings(SparkSession spark, Path out) throws IOException {
        Path dir = Files.createDirectories(out.resolve("embeddings"));
        String target = dir.toString();
        Dataset<Row> samples = spark.range(0, 30).selectExpr(
                        "id AS sample_id",
                        "id % 5 AS label",
                        "transform(sequence(0, 7), j -> CAST((id * 8 + j) / 4.0 AS FLOAT)) AS features")
                .repartition(3)
                .sortWithinPartitions("sample_id");
        MapPartitionsFunction<Row, String> writeShard = rows -> writeShard(rows, target);
        List<String> reports = new ArrayList<>(samples.mapPartitions(writeShard, Encoders.STRING()).collectAsList());
        Collections.sort(reports);

        StringBuilder shards = new StringBuilder();
        long totalSamples = 0;
        long totalBytes = 0;
        for (String report : reports) {
            String[] f = report.split(",");
            long n = Long.parseLong(f[1]);
            long bytes = Long.parseLong(f[2]);
            totalSamples += n;
            totalBytes += bytes;
            shards.append(shards.length() == 0 ? "" : ",\n")
                    .append("    {\"file\": \"").append(f[0]).append("\", \"samples_count\": ").append(n)
                    .append(", \"bytes\": ").append(bytes).append("}");
        }
        Files.writeString(dir.resolve("dataset_manifest.json"), "{\n"
                + "  \"format_version\": \"1.0\",\n"
                + "  \"safetensors_version\": \"1.0\",\n"
                + "  \"total_samples\": " + totalSamples + ",\n"
                + "  \"total_bytes\": " + totalBytes + ",\n"
                + "  \"shards\": [\n" + shards + "\n  ]\n}\n");

        FlatMapFunction<Row, String> decode = SparkFixtures::decodeShard;
        List<String> rows = new ArrayList<>(spark.read().format("binaryFile").load(target + "/*.safetensors")
                .select("path", "content").flatMap(decode, Encoders.STRING()).collectAsList());
        rows.sort(Comparator.comparing((String r) -> r.split(",")[0]).thenComparingInt(r -> Integer.parseInt(r.split(",")[1])));
        rows.add(0, "file,index,sample_id,label,features");
        Files.write(out.resolve("expected/embeddings-rows.csv"), rows);
    }

    /** One task's shard: its rows stacked into tensors. Returns "file,samples,bytes" (none for an empty partition). */
    private static Iterator<String> writeShard(Iterator<Row> rows, String dir) throws IOException {
        List<Long> ids = new ArrayList<>();
        List<Long> labels = new ArrayList<>();
        List<float[]> features = new ArrayList<>();
        while (rows.hasNext()) {
            Row r = rows.next();
            ids.add(r.getLong(0));
            labels.add(r.getLong(1));
            List<Float> f = r.getList(2);
            float[] a = new float[f.size()];
            for (int i = 0; i < a.length; i++) {
                a[i] = f.get(i);
            }
            features.add(a);
        }
        if (ids.isEmpty()) {
            return Collections.emptyIterator();
        }
        int n = ids.size();
        int width = features.get(0).length;
        ByteBuffer idBytes = ByteBuffer.allocate(8 * n).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer labelBytes = ByteBuffer.allocate(8 * n).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer featureBytes = ByteBuffer.allocate(4 * n * width).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            idBytes.putLong(ids.get(i));
            labelBytes.putLong(labels.get(i));
            for (float v : features.get(i)) {
                featureBytes.putFloat(v);
            }
        }
        long a = featureBytes.capacity();
        long b = a + labelBytes.capacity();
        long c = b + idBytes.capacity();
        String header = "{\"__metadata__\":{\"writer\":\"warp scripts/spark-fixtures\",\"spark_partition\":\""
                + TaskContext.getPartitionId() + "\"},"
                + "\"features\":{\"dtype\":\"F32\",\"shape\":[" + n + "," + width + "],\"data_offsets\":[0," + a + "]},"
                + "\"label\":{\"dtype\":\"I64\",\"shape\":[" + n + "],\"data_offsets\":[" + a + "," + b + "]},"
                + "\"sample_id\":{\"dtype\":\"I64\",\"shape\":[" + n + "],\"data_offsets\":[" + b + "," + c + "]}}";
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        int padded = (h.length + 7) / 8 * 8;
        ByteBuffer file = ByteBuffer.allocate(8 + padded + (int) c).order(ByteOrder.LITTLE_ENDIAN);
        file.putLong(padded).put(h);
        for (int i = h.length; i < padded; i++) {
            file.put((byte) ' ');
        }
        file.put(featureBytes.array()).put(labelBytes.array()).put(idBytes.array());
        // Seed 001 names a part by task and a per-task UUID; the UUID is derived from the partition
        // so that a regeneration writes the same names.
        int partition = TaskContext.getPartitionId();
        String name = String.format("part-%05d-%s.safetensors", partition,
                UUID.nameUUIDFromBytes(("warp-spark-fixtures-" + partition).getBytes(StandardCharsets.UTF_8)));
        Files.write(Path.of(dir, name), file.array());
        return List.of(name + "," + n + "," + file.capacity()).iterator();
    }

    /** Decodes one safetensors file read by Spark: "file,index,sample_id,label,f0 f1 ... f7" per sample. */
    private static Iterator<String> decodeShard(Row row) throws IOException {
        String path = row.getString(0);
        String file = path.substring(path.lastIndexOf('/') + 1);
        ByteBuffer bytes = ByteBuffer.wrap((byte[]) row.get(1)).order(ByteOrder.LITTLE_ENDIAN);
        int headerLength = (int) bytes.getLong(0);
        JsonNode header = new ObjectMapper().readTree(new String((byte[]) row.get(1), 8, headerLength, StandardCharsets.UTF_8));
        int base = 8 + headerLength;
        int n = header.get("sample_id").get("shape").get(0).asInt();
        int width = header.get("features").get("shape").get(1).asInt();
        int ids = base + header.get("sample_id").get("data_offsets").get(0).asInt();
        int labels = base + header.get("label").get("data_offsets").get(0).asInt();
        int features = base + header.get("features").get("data_offsets").get(0).asInt();
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            StringBuilder f = new StringBuilder();
            for (int j = 0; j < width; j++) {
                f.append(j == 0 ? "" : " ").append(bytes.getFloat(features + 4 * (i * width + j)));
            }
            out.add(file + "," + i + "," + bytes.getLong(ids + 8 * i) + "," + bytes.getLong(labels + 8 * i) + "," + f);
        }
        return out.iterator();
    }
}
