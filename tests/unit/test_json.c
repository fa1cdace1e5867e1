/*
 * test_json.c -- the JSON writer (src/base/json_write.c) and what reads
 * its documents back: jansson, the packaged reader pagehome uses, and
 * base/file.c, which reads files whole.
 *
 * The writer's layout, escapes, number formatting and misuse; write ->
 * jansson -> write round trips (numbers exact, strings byte for byte, the
 * deepest nesting the writer allows); the reading behaviours pagehome
 * relies on with the flags topo_json.c passes (duplicate keys refused,
 * line and column of every error, 64-bit integers exact, \u0000 and
 * invalid UTF-8 refused); files through ph_jw_write_file, ph_read_file
 * and ph_read_text, with their errors.
 */
#include "base/error.h"
#include "base/file.h"
#include "base/json_write.h"

#include "check.h"
#include "json_tree.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_ERR(needle) CHECK_CONTAINS(ph_error_message(), needle)
#define LOAD_FLAGS JSON_REJECT_DUPLICATES /* as topo_json.c */

static json_t *load(const char *text, json_error_t *err)
{
    return json_loadb(text, strlen(text), LOAD_FLAGS | JSON_DECODE_ANY, err);
}

/* ---- writer ---- */

static const char *text_of(ph_jw *w)
{
    const char *t = ph_jw_text(w, NULL);
    return t ? t : "(null)";
}

static void test_writer_layout(void)
{
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "a");
    ph_jw_int(&w, -3);
    ph_jw_key(&w, "row");
    ph_jw_array(&w, 1);
    ph_jw_uint(&w, 10);
    ph_jw_double(&w, 0.5);
    ph_jw_object(&w, 0); /* inherits compact */
    ph_jw_key(&w, "k");
    ph_jw_bool(&w, 1);
    ph_jw_end(&w);
    ph_jw_end(&w);
    ph_jw_key(&w, "list");
    ph_jw_array(&w, 0);
    ph_jw_null(&w);
    ph_jw_string(&w, "s");
    ph_jw_end(&w);
    ph_jw_key(&w, "empty");
    ph_jw_array(&w, 0);
    ph_jw_end(&w);
    ph_jw_end(&w);
    CHECK_STR(text_of(&w), "{\n"
                           "  \"a\": -3,\n"
                           "  \"row\": [10, 0.5, {\"k\": true}],\n"
                           "  \"list\": [\n"
                           "    null,\n"
                           "    \"s\"\n"
                           "  ],\n"
                           "  \"empty\": []\n"
                           "}");
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "x");
    ph_jw_array(&w, 0);
    ph_jw_int(&w, 1);
    ph_jw_int(&w, 2);
    ph_jw_end(&w);
    ph_jw_end(&w);
    CHECK_STR(text_of(&w), "{\"x\":[1,2]}");
    ph_jw_free(&w);
}

static void test_writer_values(void)
{
    static const struct {
        double v;
        const char *text;
    } nums[] = {
        {0.1, "0.1"}, {100.0, "100"}, {1e300, "1e+300"}, {-2.5, "-2.5"},
        {1.0 / 3.0, "0.3333333333333333"}, {5e-324, "4.94065645841247e-324"}, {0.0, "0"},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        ph_jw w;
        ph_jw_init(&w, 0);
        ph_jw_double(&w, nums[i].v);
        CHECK_STR(text_of(&w), nums[i].text);
        ph_jw_free(&w);
    }
    ph_jw w;
    ph_jw_init(&w, 0);
    ph_jw_array(&w, 0);
    ph_jw_double(&w, NAN);
    ph_jw_double(&w, -INFINITY);
    ph_jw_int(&w, INT64_MIN);
    ph_jw_uint(&w, UINT64_MAX);
    ph_jw_end(&w);
    CHECK_STR(text_of(&w),
              "[null,null,-9223372036854775808,18446744073709551615]");
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_string(&w, "q\"b\\n\n\x01\x1f\xc3\xa9\xff-\xe2\x82");
    CHECK_STR(text_of(&w),
              "\"q\\\"b\\\\n\\n\\u0001\\u001f\xc3\xa9\\ufffd-\\ufffd\\ufffd\"");
    ph_jw_free(&w);
}

static void test_writer_misuse(void)
{
    ph_jw w;

    ph_jw_init(&w, 0);
    ph_jw_object(&w, 0);
    ph_jw_int(&w, 1); /* value where a key is due */
    ph_jw_end(&w);
    errno = 0;
    CHECK(ph_jw_text(&w, NULL) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_ERR("json writer");
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_array(&w, 0);
    ph_jw_key(&w, "k"); /* key in an array */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_end(&w); /* nothing open */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_int(&w, 1);
    ph_jw_int(&w, 2); /* two top-level values */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "k");
    ph_jw_end(&w); /* key without value */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);

    ph_jw_init(&w, 0);
    ph_jw_array(&w, 0); /* never closed */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    CHECK_ERR("not complete");
    ph_jw_free(&w);

    ph_jw_init(&w, 0); /* nothing written */
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);
}

/* ---- round trips through jansson ---- */

static void round_trip(const char *doc, int pretty)
{
    json_error_t err;
    json_t *a = load(doc, &err);
    CHECK(a != NULL);
    if (!a) {
        fprintf(stderr, "  %s: line %d col %d: %s\n", doc, err.line, err.column, err.text);
        return;
    }
    ph_jw w;
    ph_jw_init(&w, pretty);
    ph_test_jw_put(&w, a);
    size_t len = 0;
    const char *text = ph_jw_text(&w, &len);
    CHECK(text != NULL);
    json_t *b = text ? json_loadb(text, len, LOAD_FLAGS | JSON_DECODE_ANY, &err) : NULL;
    CHECK(b && ph_test_json_same(a, b));
    json_decref(a);
    json_decref(b);
    ph_jw_free(&w);
}

static char *nested(int depth)
{
    char *s = malloc((size_t)depth * 2 + 1);
    for (int i = 0; i < depth; i++) {
        s[i] = '[';
        s[depth * 2 - 1 - i] = ']';
    }
    s[depth * 2] = '\0';
    return s;
}

static void test_round_trips(void)
{
    const char *docs[] = {
        "{\"a\":[1,-2.5,-2.5e3,1e-300,0.1,123456789012345678],\"b\":{\"c\":[[],{}]}}",
        "[\"\\u00e9\\n\\\"\",true,false,null,\"\\ud83d\\ude00\"]",
        "3.141592653589793",
        "{\"nested\":[[[[1]]]],\"x\":{\"y\":{\"z\":\"w\"}}}",
        "[9223372036854775807,-9223372036854775808,100.0,5e-324,1.7976931348623157e308]",
        "{\"ctl\":\"\\u0001\\u001f\\t\",\"\":\"\"}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        round_trip(docs[i], 0);
        round_trip(docs[i], 1);
    }
    /* The writer nests as deep as PH_JSON_MAX_DEPTH, and no deeper. */
    char *ok = nested(PH_JSON_MAX_DEPTH);
    round_trip(ok, 1);
    free(ok);
    ph_jw w;
    ph_jw_init(&w, 0);
    for (int i = 0; i <= PH_JSON_MAX_DEPTH; i++)
        ph_jw_array(&w, 0);
    CHECK(ph_jw_text(&w, NULL) == NULL);
    ph_jw_free(&w);
}

/* What pagehome's documents rely on from the reader with its flags. */
static void test_reading(void)
{
    static const struct {
        const char *text;
        int line, col;
        const char *what;
    } bad[] = {
        {"{\"a\": 1,\n \"a\": 2}", 2, 4, "duplicate object key"},
        {"{\n \"n\": 1,\n}\n", 3, 1, "string or '}' expected"},
        {"[92233720368547758070]", 1, 21, "too big integer"},
        {"[1e999]", 1, 6, "real number overflow"},
        {"[\"a\\u0000b\"]", 1, 11, "\\u0000 is not allowed"},
        {"[\"\xff\"]", 1, 2, "unable to decode byte 0xff"},
        {"[1] [2]", 1, 5, "end of file expected"},
        {"[1,]", 1, 4, "unexpected token"},
        {"[NaN]", 1, 4, "invalid token"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_error_t err;
        json_t *v = load(bad[i].text, &err);
        CHECK(v == NULL);
        json_decref(v);
        CHECK_EQ(err.line, bad[i].line);
        CHECK_EQ(err.column, bad[i].col);
        CHECK_CONTAINS(err.text, bad[i].what);
    }
    json_error_t err;
    json_t *v = load("[9223372036854775807, -9223372036854775808, 9007199254740993]", &err);
    CHECK(v != NULL);
    if (v) {
        CHECK(json_integer_value(json_array_get(v, 0)) == INT64_MAX);
        CHECK(json_integer_value(json_array_get(v, 1)) == INT64_MIN);
        CHECK(json_integer_value(json_array_get(v, 2)) == 9007199254740993LL);
    }
    json_decref(v);
}

static void test_files(void)
{
    char path[] = "/tmp/ph_test_json_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);

    ph_jw w;
    ph_jw_init(&w, 1);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "n");
    ph_jw_int(&w, 42);
    ph_jw_end(&w);
    CHECK_EQ(ph_jw_write_file(&w, path), 0);
    ph_jw_free(&w);

    size_t len = 0;
    char *text = ph_read_file(path, 1 << 20, &len);
    CHECK(text != NULL && len == strlen("{\n  \"n\": 42\n}\n"));
    CHECK(text && strcmp(text, "{\n  \"n\": 42\n}\n") == 0);
    json_error_t err;
    json_t *v = text ? json_loadb(text, len, LOAD_FLAGS, &err) : NULL;
    CHECK(v && json_integer_value(json_object_get(v, "n")) == 42);
    json_decref(v);
    free(text);

    char small[14];
    CHECK_EQ(ph_read_text(path, small, sizeof small), -1); /* 14 bytes: too big */
    CHECK_EQ(errno, EFBIG);
    char fits[15];
    CHECK_EQ(ph_read_text(path, fits, sizeof fits), 14); /* exactly fits */
    char buf[64];
    CHECK_EQ(ph_read_text(path, buf, sizeof buf), 14);
    CHECK_STR(buf, "{\n  \"n\": 42\n}\n");
    errno = 0;
    CHECK(ph_read_file(path, 10, &len) == NULL);
    CHECK_EQ(errno, EFBIG);
    CHECK_ERR("larger than the limit of 10 bytes");
    unlink(path);

    errno = 0;
    CHECK(ph_read_file("/nonexistent/ph.json", 100, &len) == NULL);
    CHECK_EQ(errno, ENOENT);
    CHECK_ERR("/nonexistent/ph.json: cannot open");
    CHECK_EQ(ph_read_text("/nonexistent/ph.json", buf, sizeof buf), -1);
    CHECK_EQ(errno, ENOENT);

    CHECK(ph_read_file("/tmp", 100, &len) == NULL);
    CHECK_ERR("/tmp: cannot read");

    /* write_fd to a closed descriptor fails with a message */
    ph_jw_init(&w, 0);
    ph_jw_null(&w);
    CHECK_EQ(ph_jw_write_fd(&w, -1), -1);
    CHECK_ERR("write to fd -1 failed");
    CHECK_EQ(ph_jw_write_file(&w, "/nonexistent/dir/x.json"), -1);
    CHECK_ERR("/nonexistent/dir/x.json");
    ph_jw_free(&w);
}

int main(void)
{
    test_writer_layout();
    test_writer_values();
    test_writer_misuse();
    test_round_trips();
    test_reading();
    test_files();
    return check_summary("test_json");
}
