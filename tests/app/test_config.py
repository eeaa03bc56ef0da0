"""Boot configuration from the environment and a TOML file."""

import pytest

from app.config import ConfigError, env_name, load


def test_environment_names_map_to_dotted_keys():
    boot = load({"SVC__VOICE__PHONE__BARGE_RMS": "0.05", "SVC__SERVER__PORT": "9000",
                 "SVC__VOICE_LIVE__TTS_STREAM": "true", "PATH": "/bin"})
    assert boot["voice.phone.barge_rms"] == 0.05
    assert boot["server.port"] == 9000
    assert boot["voice_live.tts_stream"] is True
    assert env_name("voice_live.stt_sample_rate") == "SVC__VOICE_LIVE__STT_SAMPLE_RATE"


def test_toml_file_is_read_and_environment_wins(tmp_path):
    path = tmp_path / "svc.toml"
    path.write_text('[server]\nport = 9001\nhost = "0.0.0.0"\n[features]\ntelephony = true\n')
    boot = load({"SVC__SERVER__PORT": "9002"}, file=path)
    assert boot["server.port"] == 9002
    assert boot["server.host"] == "0.0.0.0"
    assert boot["features.telephony"] is True


def test_the_public_url_follows_the_port_the_operator_starts_on():
    assert load({"SVC__SERVER__PORT": "18201"})["server.public_url"] == "http://127.0.0.1:18201"


@pytest.mark.parametrize("environ, needle", [
    ({"SVC__NO__SUCH": "1"}, "SVC__NO__SUCH"),
    ({"SVC__SERVER__PORT": "eighty"}, "SVC__SERVER__PORT"),
    ({"SVC__SERVER__PORT": "70000"}, "at most"),
    ({"SVC__FEATURES__VOICE": "maybe"}, "true or false"),
])
def test_bad_boot_values_stop_the_start_with_a_sentence(environ, needle):
    with pytest.raises(ConfigError, match=needle):
        load(environ)


def test_unreadable_toml_is_a_config_error(tmp_path):
    path = tmp_path / "svc.toml"
    path.write_text("[server\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load({}, file=path)


def test_slow_client_limits_reach_the_server_configuration():
    from app.serving import server_config

    defaults = server_config(object(), load({}))
    assert defaults.timeout_keep_alive == 5 and defaults.limit_concurrency == 1000
    assert (defaults.http.header_seconds, defaults.http.body_seconds) == (10, 30)
    given = server_config(object(), load({
        "SVC__SERVER__HEADER_TIMEOUT_SECONDS": "3", "SVC__SERVER__BODY_TIMEOUT_SECONDS": "7",
        "SVC__SERVER__KEEP_ALIVE_SECONDS": "2", "SVC__SERVER__MAX_CONNECTIONS": "50"}))
    assert (given.http.header_seconds, given.http.body_seconds) == (3, 7)
    assert given.timeout_keep_alive == 2 and given.limit_concurrency == 50
    with pytest.raises(ConfigError, match="SVC__SERVER__HEADER_TIMEOUT_SECONDS"):
        load({"SVC__SERVER__HEADER_TIMEOUT_SECONDS": "0"})
