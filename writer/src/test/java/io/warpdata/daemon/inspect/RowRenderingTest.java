package io.warpdata.daemon.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

class RowRenderingTest {
    /** DuckDB's to_json writes NaN and the infinities as bare tokens; the rendered row is strict JSON. */
    @Test
    void nanAndInfinitiesBecomeStringsAndTheRowParsesAsStrictJson() throws Exception {
        String raw;
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT " + RowRendering.json() + RowRendering.over("SELECT 'nan'::DOUBLE AS a,"
                     + " ['inf'::DOUBLE, '-inf'::DOUBLE, 1.5] AS b, 'NaN and Infinity \"q\"' AS s, 2.5::DOUBLE AS d"))) {
            rs.next();
            raw = rs.getString(1);
        }
        String strict = RowRendering.strictJson(raw);
        JsonNode row = new ObjectMapper().readTree(strict); // Jackson refuses the bare tokens by default
        assertThat(row.path("a").asText()).isEqualTo("NaN");
        assertThat(row.path("b").get(0).asText()).isEqualTo("Infinity");
        assertThat(row.path("b").get(1).asText()).isEqualTo("-Infinity");
        assertThat(row.path("b").get(2).asDouble()).isEqualTo(1.5);
        assertThat(row.path("s").asText()).isEqualTo("NaN and Infinity \"q\"");
        assertThat(row.path("d").asDouble()).isEqualTo(2.5);
        assertThat(RowRendering.strictJson("{\"x\":1}")).isEqualTo("{\"x\":1}");
    }
}
