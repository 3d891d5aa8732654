#!/bin/sh
# check-complete.sh SRCDIR LANG...: every translatable string of the files
# POTFILES.in lists has a translation, neither missing nor fuzzy, in each
# LANG.po, and the translations pass msgfmt --check.  The template is made
# afresh from the sources with the keywords of meson's glib preset, so a
# new string without its translation fails here.
set -eu
src=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -v '^#' "$src/po/POTFILES.in" | sed '/^$/d' > "$tmp/files"
(cd "$src" && xgettext --from-code=UTF-8 --add-comments --package-name=lanyfs-tools \
    --keyword=_ --keyword=N_ --keyword=C_:1c,2 --keyword=NC_:1c,2 \
    --keyword=g_dcgettext:2 --keyword=g_dngettext:2,3 --keyword=g_dpgettext2:2c,3 \
    --flag=N_:1:pass-c-format --flag=C_:2:pass-c-format --flag=NC_:2:pass-c-format \
    --flag=g_dngettext:2:pass-c-format --flag=g_strdup_printf:1:c-format \
    --flag=g_string_printf:2:c-format --flag=g_string_append_printf:2:c-format \
    --flag=g_set_error:4:c-format --flag=g_printerr:1:c-format \
    --files-from="$tmp/files" -o "$tmp/template.pot")
status=0
for lang in "$@"; do
    msgmerge --quiet --no-fuzzy-matching -o "$tmp/$lang.po" "$src/po/$lang.po" "$tmp/template.pot"
    msgfmt --check -o /dev/null "$tmp/$lang.po"
    missing=$(msgattrib --untranslated --no-obsolete "$tmp/$lang.po" | grep -c '^msgid ' || true)
    fuzzy=$(msgattrib --only-fuzzy --no-obsolete "$tmp/$lang.po" | grep -c '^msgid ' || true)
    # An output with entries has the header's msgid "" too.
    [ "$missing" -gt 0 ] && missing=$((missing - 1))
    [ "$fuzzy" -gt 0 ] && fuzzy=$((fuzzy - 1))
    if [ "$missing" -ne 0 ] || [ "$fuzzy" -ne 0 ]; then
        echo "$lang.po: $missing untranslated, $fuzzy fuzzy:"
        msgattrib --untranslated --no-obsolete --no-wrap "$tmp/$lang.po" | grep '^msgid ' | tail -n +2
        status=1
    else
        echo "$lang.po: complete"
    fi
done
exit $status
