from turnbound.properties.cli import run

run()
