#!/usr/bin/env bash
# Makes what DDS Security needs for the masters of a multi-SoC run, into DIR: one certificate
# authority (identity and permissions), a certificate and key per SoC (CN=tactus-<SOC>), the
# governance document (every tactus topic authenticated, access-controlled and encrypted; no
# unauthenticated participant joins) and the permissions document (each SoC's master may publish
# and subscribe the tactus topics), both signed by the authority; and per SoC a Cyclone DDS
# configuration fragment (DIR/<SOC>.xml) to give that SoC's master in CYCLONEDDS_URI, after the
# network part (e.g. CYCLONEDDS_URI=file://.../loopback.xml,file://DIR/SocA.xml).
#
# For tests and trials: a deployment keeps the authority's key off the vehicle and issues each
# SoC's certificate from it. Needs openssl(1); Debian's libddsc0debian ships the plugins.
#
#   make_pki.sh DIR SOC [SOC...]       e.g. make_pki.sh /tmp/pki SocA SocB
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DIR SOC [SOC...]" >&2; exit 2; }
dir=$1
shift
plugins=${TACTUS_DDS_SECURITY_PLUGINS:-/usr/lib/x86_64-linux-gnu/libddsc0debian}
for lib in auth ac crypto; do
  [ -f "$plugins/libdds_security_$lib.so" ] || {
    echo "make_pki.sh: $plugins/libdds_security_$lib.so is missing (Debian: apt-get install libddsc0debian;" \
      "elsewhere set TACTUS_DDS_SECURITY_PLUGINS to the folder of Cyclone's security plugins)" >&2
    exit 1
  }
done
mkdir -p "$dir"
cd "$dir"
quiet() { "$@" >/dev/null 2>&1 || { echo "make_pki.sh: failed: $*" >&2; exit 1; }; }

quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca_key.pem -out ca.pem \
  -days 3650 -subj "/CN=tactus-ca"
grants=""
for soc in "$@"; do
  quiet openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${soc}_key.pem" \
    -out "${soc}.csr" -subj "/CN=tactus-${soc}"
  quiet openssl x509 -req -in "${soc}.csr" -CA ca.pem -CAkey ca_key.pem -CAcreateserial -out "${soc}_cert.pem" -days 3650
  rm -f "${soc}.csr"
  grants+="<grant name=\"${soc}\"><subject_name>CN=tactus-${soc}</subject_name><validity><not_before>2020-01-01T00:00:00</not_before><not_after>2099-01-01T00:00:00</not_after></validity><allow_rule><domains><id_range><min>0</min><max>230</max></id_range></domains><publish><topics><topic>tactus_*</topic></topics></publish><subscribe><topics><topic>tactus_*</topic></topics></subscribe></allow_rule><default>DENY</default></grant>"
done
cat >governance.xml <<XML
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules><domain_rule>
    <domains><id_range><min>0</min><max>230</max></id_range></domains>
    <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
    <enable_join_access_control>true</enable_join_access_control>
    <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
    <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
    <rtps_protection_kind>ENCRYPT</rtps_protection_kind>
    <topic_access_rules><topic_rule>
      <topic_expression>tactus_*</topic_expression>
      <enable_discovery_protection>true</enable_discovery_protection>
      <enable_liveliness_protection>true</enable_liveliness_protection>
      <enable_read_access_control>true</enable_read_access_control>
      <enable_write_access_control>true</enable_write_access_control>
      <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
      <data_protection_kind>ENCRYPT</data_protection_kind>
    </topic_rule></topic_access_rules>
  </domain_rule></domain_access_rules>
</dds>
XML
cat >permissions.xml <<XML
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>${grants}</permissions>
</dds>
XML
quiet openssl smime -sign -in governance.xml -text -out governance.p7s -signer ca.pem -inkey ca_key.pem
quiet openssl smime -sign -in permissions.xml -text -out permissions.p7s -signer ca.pem -inkey ca_key.pem
here=$(pwd)
for soc in "$@"; do
  cat >"${soc}.xml" <<XML
<CycloneDDS xmlns="https://cdds.io/config"><Domain Id="any"><Security>
  <Authentication>
    <Library path="$plugins/libdds_security_auth.so" initFunction="init_authentication" finalizeFunction="finalize_authentication"/>
    <IdentityCA>file:$here/ca.pem</IdentityCA>
    <IdentityCertificate>file:$here/${soc}_cert.pem</IdentityCertificate>
    <PrivateKey>file:$here/${soc}_key.pem</PrivateKey>
  </Authentication>
  <AccessControl>
    <Library path="$plugins/libdds_security_ac.so" initFunction="init_access_control" finalizeFunction="finalize_access_control"/>
    <PermissionsCA>file:$here/ca.pem</PermissionsCA>
    <Governance>file:$here/governance.p7s</Governance>
    <Permissions>file:$here/permissions.p7s</Permissions>
  </AccessControl>
  <Cryptographic>
    <Library path="$plugins/libdds_security_crypto.so" initFunction="init_crypto" finalizeFunction="finalize_crypto"/>
  </Cryptographic>
</Security></Domain></CycloneDDS>
XML
done
chmod 600 ./*_key.pem
echo "make_pki.sh: $dir: ca.pem, governance.p7s, permissions.p7s; per SoC: <SOC>_cert.pem, <SOC>_key.pem, <SOC>.xml ($*)"
