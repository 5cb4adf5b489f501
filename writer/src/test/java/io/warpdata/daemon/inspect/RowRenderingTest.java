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

    /** audit 29: DuckDB renders a DECIMAL whose width is its scale as .123, which no JSON reader takes. */
    @Test
    void aDecimalWithoutIntegerDigitsIsWrittenWithItsLeadingZero() throws Exception {
        String raw;
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT " + RowRendering.json() + RowRendering.over("SELECT"
                     + " 0.123456789012345678::DECIMAL(18,18) AS a, -0.25::DECIMAL(2,2) AS b,"
                     + " [0.5::DECIMAL(3,3), -0.5::DECIMAL(3,3)] AS l, {'x': 0.75::DECIMAL(2,2)} AS s, '.5 :.5' AS txt"))) {
            rs.next();
            raw = rs.getString(1);
        }
        JsonNode row = new ObjectMapper().enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .setNodeFactory(com.fasterxml.jackson.databind.node.JsonNodeFactory.withExactBigDecimals(true))
                .readTree(RowRendering.strictJson(raw));
        assertThat(row.path("a").decimalValue()).isEqualByComparingTo("0.123456789012345678");
        assertThat(row.path("b").decimalValue()).isEqualByComparingTo("-0.25");
        assertThat(row.path("l").get(0).decimalValue()).isEqualByComparingTo("0.5");
        assertThat(row.path("l").get(1).decimalValue()).isEqualByComparingTo("-0.5");
        assertThat(row.path("s").path("x").decimalValue()).isEqualByComparingTo("0.75");
        assertThat(row.path("txt").asText()).as("text is left as it is").isEqualTo(".5 :.5");
    }
}
