/**
 * The scalars of Nautobot 1.6's GraphQL schema (graphene / graphene-django names): `UUID`, `Date`,
 * `DateTime`, `Decimal`, `BigInteger` and `GenericScalar` (any JSON value, as objects, not strings).
 */
import { GraphQLScalarType, Kind, type ValueNode } from "graphql";

const asText = (v: unknown) => (v === null || v === undefined ? null : String(v));

export const UUIDScalar = new GraphQLScalarType({
  name: "UUID",
  description:
    "Leverages the internal Python implementation of UUID (uuid.UUID) to provide native UUID objects in fields, resolvers and input.",
  serialize: asText,
  parseValue: asText,
  parseLiteral: (n) => (n.kind === Kind.STRING ? n.value : null),
});

export const DateScalar = new GraphQLScalarType({
  name: "Date",
  description:
    "The `Date` scalar type represents a Date value as specified by [iso8601](https://en.wikipedia.org/wiki/ISO_8601).",
  serialize: (v) => (v === null || v === undefined ? null : String(v).slice(0, 10)),
});

export const DateTimeScalar = new GraphQLScalarType({
  name: "DateTime",
  description:
    "The `DateTime` scalar type represents a DateTime value as specified by [iso8601](https://en.wikipedia.org/wiki/ISO_8601).",
  serialize: asText,
});

export const DecimalScalar = new GraphQLScalarType({
  name: "Decimal",
  description: "The `Decimal` scalar type represents a python Decimal.",
  serialize: asText,
});

export const BigIntegerScalar = new GraphQLScalarType({
  name: "BigInteger",
  description: "An integer that may exceed 32 bits (an ASN).",
  serialize: (v) => (v === null || v === undefined ? null : Number(v)),
  parseValue: (v) => String(v),
  parseLiteral: (n) => (n.kind === Kind.INT || n.kind === Kind.STRING ? n.value : null),
});

function literal(n: ValueNode): unknown {
  switch (n.kind) {
    case Kind.STRING:
    case Kind.ENUM:
      return n.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(n.value);
    case Kind.BOOLEAN:
      return n.value;
    case Kind.LIST:
      return n.values.map(literal);
    case Kind.OBJECT:
      return Object.fromEntries(n.fields.map((f) => [f.name.value, literal(f.value)]));
    default:
      return null;
  }
}

export const GenericScalar = new GraphQLScalarType({
  name: "GenericScalar",
  description:
    "The `GenericScalar` scalar type represents a generic GraphQL scalar value that could be: String, Boolean, Int, Float, List or Object.",
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: literal,
});
