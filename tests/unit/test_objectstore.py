"""The object-store settings each client gets (rewind.storage.objectstore, SPEC R44, R45):
pure derivations from one set of AWS settings, and their resolution by botocore from the
environment and the shared files. No network: the instance metadata service is switched
off and no client is asked anything."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rewind.errors import InvalidLocation
from rewind.storage import objectstore
from rewind.storage.objectstore import S3Location, S3Settings

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
TOKEN = "IQoJb3JpZ2luX2VjEXAMPLETOKEN"
LOCAL = S3Settings(
    endpoint_url="http://127.0.0.1:8333",
    region="eu-west-1",
    access_key_id="AKIAEXAMPLE0001",
    secret_access_key=SECRET,
)


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No AWS variable of the machine's, no shared files, no instance metadata service."""
    import os

    for key in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    return monkeypatch


def test_spark_gets_path_style_plain_http_the_region_and_no_secret() -> None:
    conf = objectstore.spark_conf(LOCAL)
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:8333"
    assert conf["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"
    assert conf["spark.hadoop.fs.s3a.endpoint.region"] == "eu-west-1"
    assert conf["spark.hadoop.fs.s3.impl"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert conf["spark.hadoop.fs.s3a.aws.credentials.provider"] == objectstore.ENV_PROVIDER
    assert not any(SECRET in v or "AKIAEXAMPLE0001" in v for v in conf.values())
    assert objectstore.spark_secret_conf(LOCAL) == {}


def test_spark_keeps_tls_for_https_and_aws_own_endpoints() -> None:
    https = S3Settings(
        endpoint_url="https://s3.example.com", access_key_id="A", secret_access_key="S"
    )
    assert objectstore.spark_conf(https)["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "true"
    aws = objectstore.spark_conf(S3Settings(region="us-west-2"))
    assert not {k for k in aws if k.startswith("spark.hadoop.fs.s3a.endpoint")} - {
        "spark.hadoop.fs.s3a.endpoint.region"
    }
    assert "spark.hadoop.fs.s3a.path.style.access" not in aws


def test_keys_not_in_the_environment_go_to_spark_in_process_settings_only() -> None:
    profile = S3Settings(
        access_key_id="AKIAPROFILE",
        secret_access_key=SECRET,
        session_token=TOKEN,
        keys_in_environment=False,
    )
    assert objectstore.spark_conf(profile)["spark.hadoop.fs.s3a.aws.credentials.provider"] == (
        objectstore.CONF_PROVIDERS
    )
    assert objectstore.spark_secret_conf(profile) == {
        "spark.hadoop.fs.s3a.access.key": "AKIAPROFILE",
        "spark.hadoop.fs.s3a.secret.key": SECRET,
        "spark.hadoop.fs.s3a.session.token": TOKEN,
    }


def test_delta_rs_gets_the_endpoint_plain_http_the_region_the_keys_and_conditional_put() -> None:
    assert objectstore.delta_rs_options(LOCAL) == {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:8333",
        "AWS_ALLOW_HTTP": "true",
        "AWS_REGION": "eu-west-1",
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE0001",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_CONDITIONAL_PUT": "etag",
    }
    https = objectstore.delta_rs_options(
        S3Settings(
            endpoint_url="https://s3.example.com",
            access_key_id="A",
            secret_access_key="S",
            session_token=TOKEN,
        )
    )
    assert "AWS_ALLOW_HTTP" not in https
    assert https["AWS_SESSION_TOKEN"] == TOKEN


def test_boto3_gets_path_style_bounded_time_outs_and_the_keys() -> None:
    kwargs = objectstore.boto3_kwargs(LOCAL, connect_timeout=2, read_timeout=4, attempts=3)
    config = kwargs["config"]
    assert kwargs["endpoint_url"] == "http://127.0.0.1:8333"
    assert kwargs["aws_secret_access_key"] == SECRET
    assert config.s3 == {"addressing_style": "path"}
    assert (config.connect_timeout, config.read_timeout) == (2, 4)
    assert config.retries == {"max_attempts": 3, "mode": "standard"}
    assert config.region_name == "eu-west-1"


def test_settings_hide_their_secrets_from_repr() -> None:
    shown = repr(S3Settings(access_key_id="AKIA1", secret_access_key=SECRET, session_token=TOKEN))
    assert SECRET not in shown and TOKEN not in shown


@pytest.mark.parametrize(
    ("uri", "location"),
    [
        ("s3://lake/orders", S3Location("lake", "orders")),
        ("s3a://lake/a/b/", S3Location("lake", "a/b/")),
        ("s3://lake", S3Location("lake", "")),
        ("S3://my.lake-1/x", S3Location("my.lake-1", "x")),
        ("s3://lake/team@corp/t", S3Location("lake", "team@corp/t")),  # "@" in a key
    ],
)
def test_s3_locations_parse(uri: str, location: S3Location) -> None:
    assert objectstore.parse_location(uri) == location
    assert objectstore.is_object_store(uri)


@pytest.mark.parametrize(
    "uri",
    [
        f"s3://AKIAEXAMPLE0001:{SECRET}@lake/orders",
        f"s3a://{SECRET}@lake/orders",
        f"s3://:{SECRET}@lake/",
        "s3://someone@lake/orders",
    ],
)
def test_a_location_with_credentials_is_refused_without_showing_them(uri: str) -> None:
    """SPEC R45: INVALID_LOCATION, the URI named with its user info masked."""
    with pytest.raises(InvalidLocation) as caught:
        objectstore.parse_location(uri)
    message = str(caught.value)
    assert caught.value.code == "INVALID_LOCATION"
    assert SECRET not in message and "AKIAEXAMPLE0001" not in message
    assert "someone" not in message and "wJalr" not in message
    assert re.search(r"s3a?://\*\*\*@lake/", message)


@pytest.mark.parametrize(
    "uri", ["s3://Lake/x", "s3://ab/x", "s3://a..b/x", "s3:///x", "file:///tmp/x", "/tmp/x"]
)
def test_other_locations_are_not_s3_locations(uri: str) -> None:
    with pytest.raises(InvalidLocation):
        objectstore.parse_location(uri)


def test_redact_masks_user_info_only() -> None:
    assert objectstore.redact("s3://k:s@b/p@q") == "s3://***@b/p@q"
    assert objectstore.redact("http://u:p@host:9000") == "http://***@host:9000"
    assert objectstore.redact("s3://b/p") == "s3://b/p"
    assert objectstore.redact(f"s3://AKIA1:{SECRET}@lake/t") == "s3://***@lake/t"  # "/" in it


def test_no_aws_setting_means_no_object_store_settings(aws_env: pytest.MonkeyPatch) -> None:
    """Without one, Rewind neither imports botocore nor asks its chain (which would end at
    the instance metadata service) for anything."""
    assert not objectstore.configured()
    from rewind.spark import object_store_conf

    assert object_store_conf() == {}


def test_the_standard_variables_resolve(aws_env: pytest.MonkeyPatch) -> None:
    aws_env.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
    aws_env.setenv("AWS_ACCESS_KEY_ID", "AKIAENV")
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    aws_env.setenv("AWS_SESSION_TOKEN", TOKEN)
    aws_env.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    aws_env.setenv("AWS_REGION", "eu-north-1")  # boto3's own order: AWS_REGION first
    s3 = objectstore.settings()
    assert (s3.endpoint_url, s3.region) == ("http://127.0.0.1:9000", "eu-north-1")
    assert (s3.access_key_id, s3.secret_access_key, s3.session_token) == ("AKIAENV", SECRET, TOKEN)
    assert s3.keys_in_environment
    assert objectstore.settings().plain_http


def test_a_profile_resolves_with_its_endpoint_and_region(
    aws_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "config").write_text(
        "[profile lake]\nregion = ap-south-1\nendpoint_url = https://objects.example.com\n"
    )
    (tmp_path / "credentials").write_text(
        f"[lake]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = {SECRET}\n"
    )
    aws_env.setenv("AWS_PROFILE", "lake")
    s3 = objectstore.settings()
    assert (s3.endpoint_url, s3.region) == ("https://objects.example.com", "ap-south-1")
    assert (s3.access_key_id, s3.secret_access_key) == ("AKIAPROFILE", SECRET)
    assert not s3.keys_in_environment  # a JVM started from here would not find them


def test_spark_submit_options_never_carry_a_secret(
    aws_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """SPEC R45: a command line is readable by every local user (ps); the keys reach a
    submitted job through its environment, a session made in process through its settings."""
    from rewind.spark import object_store_conf, submit_options

    (tmp_path / "credentials").write_text(
        f"[lake]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = {SECRET}\n"
    )
    aws_env.setenv("AWS_PROFILE", "lake")
    aws_env.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
    assert not any(SECRET in option for option in submit_options())
    assert object_store_conf(in_process=True)["spark.hadoop.fs.s3a.secret.key"] == SECRET
    aws_env.delenv("AWS_PROFILE")
    aws_env.setenv("AWS_ACCESS_KEY_ID", "AKIAENV")
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    assert not any(SECRET in v for v in object_store_conf(in_process=True).values())


def test_hadoop_aws_is_pysparks_hadoop_and_the_logstore_builds_against_the_pins() -> None:
    """deploy/s3/pom.xml's hadoop-aws must be the Hadoop pyspark bundles (s3a links against
    hadoop-common's internals), and deploy/logstore/ compiles against the same Hadoop and
    the Delta version deploy/delta/pom.xml pins."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    (client,) = jars.glob("hadoop-client-api-*.jar")
    hadoop = client.name.removeprefix("hadoop-client-api-").removesuffix(".jar")

    def prop(pom: str, name: str) -> str:
        found = re.search(rf"<{re.escape(name)}>([^<]+)</", (REPO / pom).read_text())
        assert found, f"{pom} has no <{name}>"
        return found[1]

    assert prop("deploy/s3/pom.xml", "hadoop.version") == hadoop
    assert prop("deploy/logstore/pom.xml", "hadoop.version") == hadoop
    assert prop("deploy/logstore/pom.xml", "delta.version") == prop(
        "deploy/delta/pom.xml", "delta.version"
    )
