package io.warpdata.daemon.inspect;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TextTableTest {
    @Test
    void aValueWithANewlineOrAControlCharacterStaysOnItsRowsLine() {
        String text = new TextTable(List.of("id", "note"))
                .add(List.of("1", "first line\nsecond\tcolumn\r\u001b[31mred"))
                .add(List.of("22", "plain"))
                .render(true);
        assertThat(text.lines()).containsExactly(
                "id  note",
                "--  " + "-".repeat("first line\\nsecond\\tcolumn\\r\\x1b[31mred".length()),
                "1   first line\\nsecond\\tcolumn\\r\\x1b[31mred",
                "22  plain");
    }
}
