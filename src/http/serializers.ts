import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";
import type { FastifyServerOptions } from "fastify";

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>["buildSerializer"]
>;
type Serializer = (doc: unknown) => string;

/** Fastify's own: fast-json-stringify over the app's shared schemas. */
const compileWith = SerializerSelector();

/** Serializers by the shared schemas they were compiled with (as JSON), then by the response schema. */
const compiled = new Map<string, Map<string, Serializer>>();
/** Sets of shared schemas remembered: an app's (tests build apps of a few coin lists in one process). */
const REMEMBERED_SETS = 4;

/**
 * Fastify's response serializers, compiled once per distinct response schema, and only when a route
 * first answers with that status. Fastify compiles one for every route and status at start, each
 * compile checking and indexing all the shared schemas: about 300 compiles (the same error envelope
 * for most), which took 1.9 s of CPU of a server's start and of every app a test builds. A
 * serializer is a pure function of its schemas, so an app built again in the same process (tests)
 * reuses those compiled before. Schemas are compared as JSON: TypeBox's symbol keys, which
 * fast-json-stringify ignores too, are left out.
 */
export const compileOncePerSchema: SerializerFactory = (externalSchemas, options) => {
  const setKey = JSON.stringify([externalSchemas ?? null, options ?? null]);
  let serializers = compiled.get(setKey);
  if (serializers === undefined) {
    serializers = new Map();
    compiled.set(setKey, serializers);
    if (compiled.size > REMEMBERED_SETS) compiled.delete(compiled.keys().next().value as string);
  }
  const own = serializers;
  const compile = compileWith(externalSchemas, options);
  return (route) => {
    const key = JSON.stringify(route.schema ?? null);
    let serializer = own.get(key);
    if (serializer === undefined) {
      let built: Serializer | null = null;
      serializer = (doc) => (built ??= compile(route))(doc);
      own.set(key, serializer);
    }
    return serializer;
  };
};
