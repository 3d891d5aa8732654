/*
 * jsoncheck.c -- check one `lanyfs --json` document read from a file.
 *
 * Usage: jsoncheck FILE EXIT.  The file must parse with json-glib, hold one
 * object whose "format" is "lanyfs-tools/1", whose "command" is a string,
 * whose "problems" is an array, and whose "exit_code" equals EXIT (the
 * status the command really returned).  Exit 0 when all holds, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

static int bad(const char *file, const char *why)
{
    fprintf(stderr, "jsoncheck: %s: %s\n", file, why);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: jsoncheck FILE EXIT\n");
        return 2;
    }
    const char *file = argv[1];
    long want = strtol(argv[2], NULL, 10);
    int rc = 1;
    GError *error = NULL;
    JsonParser *parser = json_parser_new();
    if (!json_parser_load_from_file(parser, file, &error)) {
        rc = bad(file, error->message);
        goto out;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
        rc = bad(file, "the document is not one object");
        goto out;
    }
    JsonObject *o = json_node_get_object(root);
    const char *format = json_object_get_string_member_with_default(o, "format", "");
    if (strcmp(format, "lanyfs-tools/1") != 0) {
        rc = bad(file, "\"format\" is not \"lanyfs-tools/1\"");
        goto out;
    }
    JsonNode *cmd = json_object_get_member(o, "command");
    if (cmd == NULL || json_node_get_value_type(cmd) != G_TYPE_STRING) {
        rc = bad(file, "\"command\" is missing or not a string");
        goto out;
    }
    JsonNode *problems = json_object_get_member(o, "problems");
    if (problems == NULL || !JSON_NODE_HOLDS_ARRAY(problems)) {
        rc = bad(file, "\"problems\" is missing or not an array");
        goto out;
    }
    JsonNode *ec = json_object_get_member(o, "exit_code");
    if (ec == NULL || json_node_get_value_type(ec) != G_TYPE_INT64 ||
        json_node_get_int(ec) != want) {
        rc = bad(file, "\"exit_code\" is missing or differs from the exit status");
        goto out;
    }
    rc = 0;
out:
    g_clear_error(&error);
    g_object_unref(parser);
    return rc;
}
