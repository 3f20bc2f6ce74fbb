#!/usr/bin/env bash
# Provisions one site (name and modality AE title), its laboratory's MLLP client and a RIS user
# with an API key, with nothing but the clinical-gateway CLI and its --json output. Safe to run
# again: what exists is kept (the AE title is brought back to the one given), and only the key is
# new each time. Prints one JSON document: the site, the client and the new key (shown once).
#
#   docs/examples/provision-site.sh "Riverside" RIVERSIDE 10.20.0.15
set -euo pipefail
name=${1:?usage: provision-site.sh SITE_NAME AE_TITLE LAB_IP}
ae_title=${2:?usage: provision-site.sh SITE_NAME AE_TITLE LAB_IP}
lab_ip=${3:?usage: provision-site.sh SITE_NAME AE_TITLE LAB_IP}
cg() { clinical-gateway "$@" --json; }
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT

# Exit status 1 with error code "not-found" means "create it"; any other failure stops the script.
if site=$(cg site show "$name" 2>"$errors"); then
  if [ "$(jq -r .ae_title <<<"$site")" != "$ae_title" ]; then site=$(cg site update "$name" --ae-title "$ae_title"); fi
elif [ "$(jq -r .error.code <"$errors")" = "not-found" ]; then
  site=$(cg site create --name "$name" --ae-title "$ae_title")
else
  cat "$errors" >&2
  exit 1
fi
site_id=$(jq -r .id <<<"$site")

client=$(cg client list --site "$site_id" | jq -c '.[] | select(.name == "laboratory")')
if [ -z "$client" ]; then
  client=$(cg client create --site "$site_id" --name laboratory --protocol hl7-mllp --allowed-ips "$lab_ip" --sending-application LAB)
else
  client=$(cg client update "$(jq -r .id <<<"$client")" --site "$site_id" --allowed-ips "$lab_ip" --enable)
fi

ris_email="ris@$(tr -cd 'a-z0-9' <<<"${name,,}").example"
if ! cg user list --site "$site_id" | jq -e --arg email "$ris_email" '.[] | select(.email == $email)' >/dev/null; then
  cg user create --site "$site_id" --email "$ris_email" --role clinician >/dev/null
fi
key=$(cg key create --site "$site_id" --user "$ris_email" --label "RIS (provisioned $(date -u +%F))")

jq -n --argjson site "$site" --argjson client "$client" --argjson key "$key" '{site: $site, client: $client, key: {id: $key.id, prefix: $key.prefix, key: $key.key}}'
