package io.warpdata.daemon.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * audit 28: a view's rows depended on the time zone of the machine that ran {@code warpctl view}
 * (a filter on {@code ts::DATE} of a TIMESTAMPTZ): the README promises the same version from the
 * same command on any machine. warpctl runs here as its own process, once per TZ.
 */
class ViewTimeZoneIT {
    @TempDir
    Path tmp;

    private ScriptRun warpctl(String tz, String... args) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-jar",
                ScriptRun.builtJar().toString(), "warpctl"));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("--remote", "file://" + tmp.resolve("store")));
        return ScriptRun.run(cmd, Map.of("TZ", tz), Duration.ofMinutes(2));
    }

    @Test
    void aViewFilteringOnTheDateOfATimestampWithZoneIsTheSameVersionInEveryTimeZone() throws Exception {
        Path file = tmp.resolve("data/part-0.parquet");
        Files.createDirectories(file.getParent());
        Files.createDirectories(tmp.resolve("store"));
        try (Connection c = java.sql.DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
            st.execute("SET TimeZone = 'UTC'");
            st.execute("COPY (SELECT i::BIGINT AS id, TIMESTAMPTZ '2026-03-29 00:30:00+00' + to_hours(i) AS ts"
                    + " FROM range(72) t(i)) TO '" + file + "' (FORMAT PARQUET)");
        }
        ScriptRun pub = warpctl("UTC", "publish", "audit/tz", "--table", "main=" + file, "--set-latest");
        assertThat(pub.exitCode()).as(pub.toString()).isZero();

        ObjectMapper json = new ObjectMapper();
        List<JsonNode> views = new ArrayList<>();
        for (String tz : new String[] {"UTC", "Pacific/Kiritimati", "America/Los_Angeles"}) {
            ScriptRun view = warpctl(tz, "view", "audit/tz", "--as", "audit/day", "--where",
                    "ts::DATE = DATE '2026-03-30'", "--tag", "t-" + tz.replace('/', '-').toLowerCase(java.util.Locale.ROOT), "--json");
            assertThat(view.exitCode()).as(tz + ": " + view).isZero();
            views.add(json.readTree(view.stdout()));
        }
        assertThat(views.get(0).path("rows").asLong()).as("ids 24 to 47: the day in UTC").isEqualTo(24);
        // stream and head render a TIMESTAMPTZ in UTC too (it was +05:30 under TZ=Asia/Kolkata).
        ScriptRun csv = warpctl("Asia/Kolkata", "stream", "audit/tz", "--format", "csv");
        assertThat(csv.exitCode()).as(csv.toString()).isZero();
        assertThat(csv.stdout()).contains("2026-03-29 00:30:00+00").doesNotContain("+05:30");
        ScriptRun head = warpctl("Asia/Kolkata", "head", "audit/tz", "-n", "1");
        assertThat(head.stdout()).as(head.toString()).contains("2026-03-29 00:30:00+00").doesNotContain("+05:30");
        assertThat(views).extracting(v -> v.path("version").asText()).as("one version whatever TZ warpctl ran in")
                .containsOnly(views.get(0).path("version").asText());
    }
}
