from turnbound.properties.cli.main import run

run()
