package io.warpdata.daemon.inspect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A where filter stays one expression: it cannot close the WHERE and add SQL of its own (audit 6). */
class FilterTextTest {
    private static long count(String where) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM (SELECT i AS id, 'n' || i AS note FROM range(10) t(i)) t"
                     + FilterText.clause(where) + " LIMIT 5")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void expressionsRunAsDuckDbReadsThem() throws Exception {
        assertThat(count("id < 3")).isEqualTo(3);
        assertThat(count("id < 3 -- a comment at the end")).as("refused before: the comment ate the ')'").isEqualTo(3);
        assertThat(count("note = 'n)' OR id = 1")).isEqualTo(1);
        assertThat(count("note <> 'it''s (' AND id IN (SELECT 2 UNION ALL SELECT 4)")).isEqualTo(2);
        assertThat(count("\"id\" /* ) */ < 2")).isEqualTo(2);
        assertThat(count("note <> E'\\\\' AND id = 7")).isEqualTo(1);
    }

    @Test
    void textThatWouldCloseTheFilterAndAddSqlIsRefused() {
        for (String attack : List.of(
                "1=1) UNION ALL SELECT 1 --",
                "1=1); SELECT 1",
                "id < 3 OR (1=1",
                "E'\\'' ) UNION ALL SELECT 1 --'",
                "note = $$x$$",
                "note = 'unclosed",
                "/* unclosed")) {
            assertThatThrownBy(() -> FilterText.clause(attack)).as(attack)
                    .isInstanceOf(TableBatches.BadFilterException.class)
                    .hasMessageContaining("cannot be run");
        }
    }

    /** audit 32: "label = " was "near ')'", a parenthesis Warp wrote; a CLI user was shown Python's where=. */
    @Test
    void aFilterThatStopsShortIsSaidToInTheUsersWords() {
        TableBatches.BadFilterException e = new TableBatches.BadFilterException("label = ",
                new java.sql.SQLException("Parser Error: syntax error at or near \")\"\n\nLINE 1: ..."));
        assertThat(e.getMessage()).contains("syntax error at the end of the filter").doesNotContain("near \")\"");
        assertThat(e.nextStep()).contains("warpctl view --where", "Python's where=").doesNotContain("where=\"");
        assertThat(new TableBatches.BadFilterException("id IN (1, 2", new java.sql.SQLException("syntax error at or near \")\""))
                .getMessage()).as("a filter that has parentheses of its own: DuckDB's words stay").contains("near \")\"");
    }
}
